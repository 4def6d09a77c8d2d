// Proxy mode: a gate fronting a real A2A agent (interop/a2a-js/upstream.mjs, written with the
// official A2A JavaScript SDK; its packages come from `npm ci` there, which .ci/run and `make deps`
// run). The fronted agent's card, a text message forwarded and answered by the agent, and a
// hallucinated total refused by the gate as a JSON-RPC error carrying the signed verdict.
import { before, after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startGate, repoRoot, waitFor } from './gate.mjs';
import { QWEDClient } from '../dist/index.js';

const upstreamDir = join(repoRoot, 'interop', 'a2a-js');

let agent;
let gate;
let client;
let agentOut = '';

before(async () => {
  if (!existsSync(join(upstreamDir, 'node_modules', '@a2a-js'))) {
    throw new Error('proxy mode needs interop/a2a-js\'s packages: cd interop/a2a-js && npm ci');
  }
  agent = spawn(process.execPath, ['upstream.mjs', '0'], { cwd: upstreamDir, stdio: ['ignore', 'pipe', 'pipe'] });
  agent.stdout.on('data', (b) => (agentOut += b));
  agent.stderr.on('data', (b) => (agentOut += b));
  const port = await waitFor(async () => agentOut.match(/listening (\d+)/)?.[1], 60_000, 'the A2A agent');
  gate = await startGate(['--refusal-rate', '0', '--a2a-upstream', `treasury=http://127.0.0.1:${port}`, '--a2a-trusted-agents', 'procurement,treasury']);
  client = new QWEDClient({ apiKey: gate.adminKey, baseUrl: gate.url });
});
after(async () => {
  await gate?.stop();
  if (agent && agent.exitCode === null) {
    agent.kill('SIGTERM');
    await new Promise((r) => agent.once('exit', r));
  }
});

const message = (id, part) => ({
  jsonrpc: '2.0',
  id,
  method: 'SendMessage',
  params: { message: { messageId: id, role: 'ROLE_USER', metadata: { sender_agent_id: 'procurement' }, parts: [part] } },
});

describe('proxy mode', () => {
  it('reads the fronted agent\'s card, rewritten to the gate, without a credential', async () => {
    const sent = [];
    const c = new QWEDClient({ apiKey: gate.adminKey, baseUrl: gate.url, fetch: (u, i) => { sent.push(i.headers); return fetch(u, i); } });
    const card = await c.getA2AAgentCard('treasury');
    assert.equal(card.supportedInterfaces[0].url, `${gate.url}/a2a/proxy/treasury`);
    assert.equal((await c.getA2AAgentCard('treasury', { legacy: true })).name, card.name);
    assert.ok(sent.every((h) => !('x-api-key' in h) && !('authorization' in h)));
  });

  it('forwards a message the agent answers, and answers a refused one with the signed verdict', async () => {
    const ok = await client.a2aProxy({ name: 'treasury', request: message('ts-1', { text: 'Hello' }), a2aVersion: '1.0' });
    assert.deepEqual(ok.result.message.parts, [{ text: 'echo: Hello' }]);
    const bad = {
      data: { data: { claimed_total: 999.99, line_items: [{ description: 'Widget', amount: 50, quantity: 2 }] } },
      metadata: { payload_type: 'financial_transaction' },
    };
    // The gate's refusal is a JSON-RPC error: a result, not an exception, whatever the HTTP status.
    const blocked = await client.a2aProxy({ name: 'treasury', request: message('ts-2', bad), a2aVersion: '1.0' });
    assert.equal(blocked.error.code, -32050);
    assert.equal(blocked.error.data.status, 'blocked');
    const claims = await client.verifyAttestation(blocked.error.data.attestation_jwt, { kind: 'a2a' });
    assert.equal(claims.qwed_a2a.verdict, 'blocked');
    // The agent got the first message only.
    const received = await (await fetch(`http://127.0.0.1:${agentOut.match(/listening (\d+)/)[1]}/received`)).json();
    assert.deepEqual(received, ['ts-1']);
  });
});
