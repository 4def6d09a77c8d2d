// A real agentgate process for the tests: the binary from AGENTGATE_BIN, else <repo>/bin/agentgate
// (built by `make build`), on a free loopback port, with a temporary data dir and a fixed admin key,
// stopped (SIGTERM, then SIGKILL) at the end.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
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

/** freePort returns a loopback port that was free a moment ago. */
export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
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
 * startGate starts `agentgate serve` and resolves once GET /healthz answers 200:
 * {url, adminKey, dataDir, log(), stop()}. extraArgs are added to serve's flags.
 */
export async function startGate(extraArgs = []) {
  const adminKey = 'qwed_admin_sdk_ts_test_key';
  for (let attempt = 0; ; attempt++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'agentgate-ts-'));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const p = startProcess(['serve', '--data', dataDir, '--http', `127.0.0.1:${port}`, '--api-key', adminKey, ...extraArgs]);
    const stop = async () => {
      await p.stop();
      rmSync(dataDir, { recursive: true, force: true });
    };
    try {
      await waitFor(async () => p.exited() || (await fetch(`${url}/healthz`)).status === 200, 60_000, `the gate at ${url}`);
      if (p.exited()) throw new Error('the gate exited');
      return { url, adminKey, dataDir, log: p.output, stop };
    } catch (e) {
      await stop();
      // The port was taken between freePort and the gate's listen: try another.
      if (p.exited() && attempt < 3 && /address already in use/.test(p.output())) continue;
      throw new Error(`${e.message}\n${p.output()}`);
    }
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
