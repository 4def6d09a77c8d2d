#!/usr/bin/env node
// The SDK's overhead over a raw fetch to the same endpoint of a real gate, on the same keep-alive
// connection pool (Node's global fetch dispatcher): each round makes one SDK call and one raw call,
// in alternating order, and the figures are the medians (p50) and p90 of each, and the median of
// the per-round differences.
//
//   node bench/overhead.mjs [rounds]      (AGENTGATE_BIN, else <repo>/bin/agentgate; npm run build first)
//
// Endpoints: GET /agents/{id}/budget with the agent token (a read), and POST /agents/{id}/verify
// (a decision, each call a new step; a new conversation every 50 steps).
import { performance } from 'node:perf_hooks';
import { cpus } from 'node:os';
import { startGate } from '../test/gate.mjs';
import { QWEDClient } from '../dist/index.js';

const rounds = Number(process.argv[2] ?? 2000);
const warmup = Math.min(200, Math.floor(rounds / 10));

function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

async function measure(name, sdkCall, rawCall) {
  const sdk = [];
  const raw = [];
  const diff = [];
  for (let i = 0; i < warmup + rounds; i++) {
    let a;
    let b;
    const timeSdk = async () => {
      const t = performance.now();
      await sdkCall(i);
      a = performance.now() - t;
    };
    const timeRaw = async () => {
      const t = performance.now();
      await rawCall(i);
      b = performance.now() - t;
    };
    if (i % 2 === 0) {
      await timeSdk();
      await timeRaw();
    } else {
      await timeRaw();
      await timeSdk();
    }
    if (i >= warmup) {
      sdk.push(a);
      raw.push(b);
      diff.push(a - b);
    }
  }
  const f = (x) => x.toFixed(3);
  const row = { name, rounds, sdkP50: quantile(sdk, 0.5), rawP50: quantile(raw, 0.5), overheadP50: quantile(sdk, 0.5) - quantile(raw, 0.5), diffMedian: quantile(diff, 0.5), sdkP90: quantile(sdk, 0.9), rawP90: quantile(raw, 0.9) };
  console.log(`| ${name} | ${rounds} | ${f(row.rawP50)} | ${f(row.sdkP50)} | ${f(row.overheadP50)} | ${f(row.diffMedian)} | ${f(row.rawP90)} | ${f(row.sdkP90)} |`);
  return row;
}

const gate = await startGate(['--refusal-rate', '0']);
try {
  const admin = new QWEDClient({ apiKey: gate.adminKey, baseUrl: gate.url });
  const key = (await admin.issuePrincipalKey({ principalId: 'org_bench' })).api_key;
  const reg = await new QWEDClient({ apiKey: key, baseUrl: gate.url }).registerAgent({ name: 'Bench', type: 'supervised', principalId: 'org_bench', permissions: { allowed_engines: ['math'] } });
  const agentId = reg.agent_id;
  const token = reg.agent_token;
  const sdk = new QWEDClient({ baseUrl: gate.url, agentToken: token });
  const auth = { authorization: `Bearer ${token}`, accept: 'application/json' };

  console.log(`node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${new Date().toISOString()}`);
  console.log('| call | rounds | raw fetch p50 (ms) | SDK p50 (ms) | SDK − raw p50 (ms) | median of per-round differences (ms) | raw p90 | SDK p90 |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');

  const budgetUrl = `${gate.url}/agents/${agentId}/budget`;
  await measure('GET /agents/{id}/budget', () => sdk.getAgentBudget(agentId), async () => {
    const r = await fetch(budgetUrl, { headers: auth });
    if (r.status !== 200) throw new Error(`raw: ${r.status}`);
    await r.json();
  });

  const verifyUrl = `${gate.url}/agents/${agentId}/verify`;
  const ctx = (who, i) => ({ conversation_id: `${who}_${Math.floor(i / 50)}`, step_number: (i % 50) + 1 });
  await measure('POST /agents/{id}/verify', async (i) => {
    const d = await sdk.verifyAction({ agentId, action: { type: 'calculate', query: `${i}+1` }, context: ctx('sdk', i) });
    if (d.decision !== 'APPROVED') throw new Error(`sdk: ${d.decision} ${JSON.stringify(d.error)}`);
  }, async (i) => {
    const r = await fetch(verifyUrl, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ action: { type: 'calculate', query: `${i}+1` }, context: ctx('raw', i) }),
    });
    const d = await r.json();
    if (d.decision !== 'APPROVED') throw new Error(`raw: ${d.decision}`);
  });
} finally {
  await gate.stop();
}
