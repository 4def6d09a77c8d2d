// A real agentgate process for the tests: the binary from AGENTGATE_BIN, else <repo>/bin/agentgate
// (built by `make build`), on a loopback port it binds itself (port 0), with a temporary data dir and a fixed admin key,
// stopped (SIGTERM, then SIGKILL) at the end.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..', '..');

/** gateBinary is the agentgate binary the tests run. */
export function gateBinary() {
  const bin = process.env.AGENTGATE_BIN || join(repoRoot, 'bin', 'agentgate');
  if (!existsSync(bin)) throw new Error(`no agentgate binary at ${bin}: run make build, or set AGENTGATE_BIN`);
  return bin;
}

/**
 * refusingPort resolves with {port, close()}: a loopback port that refuses connections until close.
 * The port is the local end of a connection kept open to a server of the helper's own: nothing listens
 * on it and, while that connection lives, no other process can bind it (a port freed to be "free"
 * could be taken by any process before the test connects to it).
 */
export async function refusingPort() {
  const accepted = [];
  const server = createServer((s) => accepted.push(s));
  await new Promise((res, rej) => {
    server.once('error', rej);
    server.listen(0, '127.0.0.1', res);
  });
  const client = connect(server.address().port, '127.0.0.1');
  await new Promise((res, rej) => client.once('connect', res).once('error', rej));
  return {
    port: client.localPort,
    close() {
      client.destroy();
      for (const s of accepted) s.destroy();
      server.close();
    },
  };
}

/** waitFor polls fn until it returns a truthy value, or throws after ms. */
export async function waitFor(fn, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * startProcess runs the agentgate binary with args: {output(), exited(), stop()}; stop sends
 * SIGTERM, then SIGKILL after 10 s, and resolves once the process has exited.
 */
export function startProcess(args) {
  const proc = spawn(gateBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (b) => (out += b));
  proc.stderr.on('data', (b) => (out += b));
  let exited = false;
  const exit = new Promise((r) => proc.once('exit', () => { exited = true; r(); }));
  return {
    output: () => out,
    exited: () => exited,
    async stop() {
      if (!exited) {
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await exit;
        clearTimeout(t);
      }
    },
  };
}

/**
 * startGate starts `agentgate serve --http 127.0.0.1:0` (the gate binds a free port itself and prints
 * "agentgate listening on URL") and resolves once GET /healthz answers 200 at that URL:
 * {url, adminKey, dataDir, log(), stop()}. extraArgs are added to serve's flags.
 */
export async function startGate(extraArgs = []) {
  const adminKey = 'qwed_admin_sdk_ts_test_key';
  const dataDir = mkdtempSync(join(tmpdir(), 'agentgate-ts-'));
  const p = startProcess(['serve', '--data', dataDir, '--http', '127.0.0.1:0', '--api-key', adminKey, ...extraArgs]);
  const stop = async () => {
    await p.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const url = await waitFor(async () => p.exited() || p.output().match(/^agentgate listening on (https?:\/\/\S+)$/m)?.[1], 60_000, 'the gate\'s address');
    if (p.exited()) throw new Error('the gate exited');
    await waitFor(async () => p.exited() || (await fetch(`${url}/healthz`)).status === 200, 60_000, `the gate at ${url}`);
    if (p.exited()) throw new Error('the gate exited');
    return { url, adminKey, dataDir, log: p.output, stop };
  } catch (e) {
    await stop();
    throw new Error(`${e.message}\n${p.output()}`);
  }
}

/**
 * startListening runs the agentgate command args, which prints "listening on ADDRESS", and resolves
 * with {address, stop()}.
 */
async function startListening(args, what) {
  const p = startProcess(args);
  try {
    const address = await waitFor(async () => p.exited() || p.output().match(/listening on (\S+)/)?.[1], 30_000, what);
    if (p.exited()) throw new Error(`${what} exited`);
    return { address, stop: p.stop };
  } catch (e) {
    await p.stop();
    throw new Error(`${e.message}\n${p.output()}`);
  }
}

/** startKafkaBroker starts `agentgate dev-kafka` (topics in memory) on a free port: {brokers, stop()}. */
export async function startKafkaBroker() {
  const b = await startListening(['dev-kafka', '--listen', '127.0.0.1:0', '--data', ''], 'dev-kafka');
  return { brokers: b.address, stop: b.stop };
}

/** startDevBusiness starts `agentgate dev-business` on a free port: {url, stop()}. */
export async function startDevBusiness() {
  const b = await startListening(['dev-business', '--listen', '127.0.0.1:0'], 'dev-business');
  return { url: b.address, stop: b.stop };
}
