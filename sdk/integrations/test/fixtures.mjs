// Fixtures of the integration tests, on a real agentgate process started by
// the core SDK's harness (sdk/typescript/test/gate.mjs: `agentgate serve` on a
// temporary data dir and a free port; the binary is $AGENTGATE_BIN, else
// <repo>/bin/agentgate). Shared by sdk/integrations and sdk/mcp.
import { describe, before, after } from 'node:test';
import { startGate, startKafkaBroker, waitFor } from '../../typescript/test/gate.mjs';

export { startGate, waitFor };

/**
 * startKafkaGate starts the gate's Kafka deployment: a dev broker
 * (`agentgate dev-kafka`, in memory) and `agentgate serve --kafka-brokers`
 * on it. The answer is startGate's, whose stop also stops the broker.
 */
export async function startKafkaGate() {
  const broker = await startKafkaBroker();
  try {
    const gate = await startGate(['--kafka-brokers', broker.brokers]);
    return { ...gate, stop: async () => { await gate.stop(); await broker.stop(); } };
  } catch (e) {
    await broker.stop();
    throw e;
  }
}

/**
 * eachDeployment runs a suite once per deployment of the gate, embedded
 * (Pebble) and Kafka, each in its own describe: body(ctx) registers the
 * tests; ctx.gate is that deployment's gate from its before hook on, stopped
 * after the suite.
 */
export function eachDeployment(body) {
  for (const [name, start] of [['embedded gate (Pebble)', startGate], ['Kafka gate (dev-kafka)', startKafkaGate]]) {
    describe(name, () => {
      const ctx = { gate: undefined };
      before(async () => {
        ctx.gate = await start();
      });
      after(async () => {
        await ctx.gate?.stop();
      });
      body(ctx);
    });
  }
}

/** call sends one raw request to the gate (test setup, independent of the SDKs under test). */
export async function call(gate, method, path, { key, token, body } = {}) {
  const headers = { 'content-type': 'application/json' };
  if (key) headers['X-API-Key'] = key;
  if (token) headers.Authorization = `Bearer ${token}`;
  const r = await fetch(gate.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (r.status >= 500) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return { status: r.status, body: json, text };
}

/**
 * setupPrincipal issues a principal key, registers its tools (search_db low
 * risk, archive_file medium, send_email high) and a supervised agent allowed
 * them (execute_code blocked); it returns the key, the agent id and token.
 */
export async function setupPrincipal(gate, principal = 'org_acme') {
  const k = await call(gate, 'POST', `/principals/${principal}/keys`, { key: gate.adminKey });
  if (k.status !== 200 && k.status !== 201) throw new Error(`issuing a key: ${k.text}`);
  const key = k.body.api_key;
  const tools = await call(gate, 'PUT', `/principals/${principal}/tools`, {
    key,
    body: { tools: [{ name: 'search_db', risk_level: 'low' }, { name: 'archive_file', risk_level: 'medium' }, { name: 'send_email', risk_level: 'high' }] },
  });
  if (tools.status !== 200) throw new Error(`registering tools: ${tools.text}`);
  const reg = await call(gate, 'POST', '/agents/register', {
    key,
    body: {
      agent: { name: 'TsintAgent', type: 'supervised', principal_id: principal },
      permissions: { allowed_engines: ['math', 'sql'], allowed_tools: ['search_db', 'archive_file', 'send_email'], blocked_tools: ['execute_code'] },
      budget: { max_daily_cost_usd: 10, max_requests_per_hour: 1000 },
    },
  });
  if (reg.status !== 200 && reg.status !== 201) throw new Error(`registering an agent: ${reg.text}`);
  return { principal, key, agentId: reg.body.agent_id, token: reg.body.agent_token };
}
