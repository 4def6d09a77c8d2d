// The same client against the Kafka deployment: a gate on `agentgate dev-kafka` (kfake, in memory)
// answers the HTTP API from its Kafka log; the agent's flow, decisions as results, an approval, a
// lost answer retried with its key, and offline attestations behave as in the embedded gate.
import { before, after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGate, startKafkaBroker } from './gate.mjs';
import { startProxy } from './proxy.mjs';
import { QWEDClient, QWEDAgentClient, AuthenticationError } from '../dist/index.js';

let broker;
let gate;
let proxy;
let key;

before(async () => {
  broker = await startKafkaBroker();
  gate = await startGate(['--refusal-rate', '0', '--kafka-brokers', broker.brokers]);
  proxy = await startProxy(gate.url);
  const admin = new QWEDClient({ apiKey: gate.adminKey, baseUrl: gate.url });
  key = (await admin.issuePrincipalKey({ principalId: 'org_kafka' })).api_key;
});
after(async () => {
  await proxy?.stop();
  await gate?.stop();
  await broker?.stop();
});

describe('the Kafka deployment', () => {
  it('runs the agent\'s flow: register, verify with generated contexts, attest, log, loop and budget decisions', async () => {
    const agent = await QWEDAgentClient.register({ baseUrl: gate.url, apiKey: key, name: 'KafkaAgent', principalId: 'org_kafka', permissions: { allowed_engines: ['math', 'sql'] }, budget: { max_daily_cost_usd: 1 } });
    const r = await agent.verifyAction({ type: 'execute_sql', query: 'SELECT id FROM orders WHERE customer_id = 7' }, undefined, { options: { require_attestation: true } });
    assert.equal(r.decision, 'APPROVED');
    assert.equal(r.verified_query, 'SELECT id FROM orders WHERE customer_id = 7');
    assert.equal((await agent.verifyAttestation(r.attestation)).jti, r.action_id);
    assert.equal((await agent.logExecution({ actionId: r.action_id, success: true, attestation: r.attestation, costUsd: 0.1 })).logged, true);
    const loop = [];
    for (let i = 0; i < 3; i++) loop.push(await agent.verifyAction({ type: 'calculate', query: '2+2' }));
    assert.deepEqual(loop.map((d) => d.decision), ['APPROVED', 'APPROVED', 'DENIED']);
    assert.equal(loop[2].error.code, 'QWED-AGENT-LOOP-003');
    const over = await agent.verifyAction({ type: 'calculate', query: '1+1', estimated_cost_usd: 5 });
    assert.equal(over.decision, 'BUDGET_EXCEEDED');
    assert.equal(over.step_number, 4, 'the denied step 4 was reused');
    const budget = await agent.getBudget();
    assert.equal(budget.budget.cost.current_daily_usd, 0.1);
    assert.equal((await agent.getActivity()).activities.length, 5);
  });

  it('approves a PENDING tool call, and refuses a wrong token', async () => {
    const client = new QWEDClient({ apiKey: key, baseUrl: gate.url });
    const reg = await client.registerAgent({ name: 'KafkaTools', type: 'supervised', principalId: 'org_kafka' });
    const asAgent = new QWEDClient({ baseUrl: gate.url, agentToken: reg.agent_token });
    const d = await asAgent.verifyToolCall({ agentId: reg.agent_id, toolName: 'send_email', parameters: { to: 'a@example.com' } });
    assert.equal(d.decision, 'PENDING');
    assert.equal((await client.approve({ approvalId: d.approval.approval_id })).approval.status, 'approved');
    assert.equal((await asAgent.getApproval(d.approval.approval_id)).status, 'approved');
    await assert.rejects(new QWEDClient({ baseUrl: gate.url, agentToken: 'qwed_agent_wrong' }).getAgent(reg.agent_id), AuthenticationError);
  });

  it('retries a lost answer with the same key: one decision', async () => {
    const reg = await new QWEDClient({ apiKey: key, baseUrl: gate.url }).registerAgent({ name: 'KafkaRetry', type: 'supervised', principalId: 'org_kafka', permissions: { allowed_engines: ['math'] } });
    proxy.reset();
    proxy.next({ kind: 'drop' });
    const c = new QWEDClient({ baseUrl: proxy.url, agentToken: reg.agent_token });
    const d = await c.verifyAction({ agentId: reg.agent_id, action: { type: 'calculate', query: '3+4' }, context: { conversation_id: 'k', step_number: 1 } });
    assert.equal(d.decision, 'APPROVED');
    assert.equal(proxy.seen.length, 2);
    assert.equal(proxy.seen[1].idempotencyKey, proxy.seen[0].idempotencyKey);
    const acts = (await c.getAgentActivity(reg.agent_id)).activities;
    assert.deepEqual(acts.map((a) => a.activity_id), [d.action_id]);
  });
});
