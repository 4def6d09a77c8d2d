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
 * startGate starts `agentgate serve` and resolves once GET /healthz answers 200:
 * {url, adminKey, dataDir, log(), stop()}. extraArgs are added to serve's flags.
 */
export async function startGate(extraArgs = []) {
  const bin = gateBinary();
  const adminKey = 'qwed_admin_sdk_ts_test_key';
  for (let attempt = 0; ; attempt++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'agentgate-ts-'));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const args = ['serve', '--data', dataDir, '--http', `127.0.0.1:${port}`, '--api-key', adminKey, ...extraArgs];
    const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (b) => (out += b));
    proc.stderr.on('data', (b) => (out += b));
    let exited = false;
    const exit = new Promise((r) => proc.once('exit', (code) => { exited = true; r(code); }));
    const stop = async () => {
      if (!exited) {
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await exit;
        clearTimeout(t);
      }
      rmSync(dataDir, { recursive: true, force: true });
    };
    try {
      await waitFor(async () => {
        if (exited) return 'exited';
        const r = await fetch(`${url}/healthz`);
        return r.status === 200;
      }, 60_000, `the gate at ${url}`);
      if (exited) throw new Error('the gate exited');
      return { url, adminKey, dataDir, log: () => out, stop };
    } catch (e) {
      await stop();
      // The port was taken between freePort and the gate's listen: try another.
      if (exited && attempt < 3 && /address already in use/.test(out)) continue;
      throw new Error(`${e.message}\n${out}`);
    }
  }
}

/**
 * startKafkaBroker starts `agentgate dev-kafka` (topics in memory) on a free port and resolves with
 * {brokers, stop()}.
 */
export async function startKafkaBroker() {
  const proc = spawn(gateBinary(), ['dev-kafka', '--listen', '127.0.0.1:0', '--data', ''], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (b) => (out += b));
  proc.stderr.on('data', (b) => (out += b));
  let exited = false;
  const exit = new Promise((r) => proc.once('exit', () => { exited = true; r(); }));
  const stop = async () => {
    if (!exited) {
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(t);
    }
  };
  try {
    const brokers = await waitFor(async () => (exited ? 'exited' : out.match(/listening on (127\.0\.0\.1:\d+)/)?.[1]), 30_000, 'dev-kafka');
    if (exited) throw new Error('dev-kafka exited');
    return { brokers, stop };
  } catch (e) {
    await stop();
    throw new Error(`${e.message}\n${out}`);
  }
}
