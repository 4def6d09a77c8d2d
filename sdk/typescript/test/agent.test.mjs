// The agent's calls against a real gate: the QWED-Agent spec v1.1 §9.1 flow and the user guide's
// examples (registration, conversation controls, budgets, tool approvals), decisions as results.
import { before, after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startGate } from './gate.mjs';
import { QWEDClient, QWEDAgentClient, AttestationError, ValidationError, AuthenticationError, NotFoundError, PermissionDeniedError } from '../dist/index.js';

let gate;
let admin;
let key; // org_agents' API key
before(async () => {
  gate = await startGate(['--refusal-rate', '0']);
  admin = new QWEDClient({ apiKey: gate.adminKey, baseUrl: gate.url });
  key = (await admin.issuePrincipalKey({ principalId: 'org_agents' })).api_key;
});
after(async () => gate?.stop());

describe('QWEDAgentClient (QWED-Agent spec v1.1 §9.1)', () => {
  it('registers, verifies with a generated context, runs the verified query and logs with the attestation', async () => {
    const agent = await QWEDAgentClient.register({
      baseUrl: gate.url,
      apiKey: key,
      name: 'MyAgent',
      principalId: 'org_agents',
      permissions: { allowed_engines: ['math', 'sql'], allowed_tools: ['database_read'] },
      budget: { max_daily_cost_usd: 50.0 },
    });
    assert.match(agent.agentId, /^agent_/);
    assert.equal(agent.registration.name, 'MyAgent');
    assert.equal(agent.registration.type, 'supervised');
    assert.equal('agent_token' in agent.registration, false, 'the token is not kept in the registration');

    const result = await agent.verifyAction({ type: 'execute_sql', query: 'SELECT id, total FROM orders WHERE customer_id = 42' }, undefined, { options: { require_attestation: true } });
    assert.equal(result.decision, 'APPROVED');
    assert.equal(result['decision'], 'APPROVED');
    assert.equal(result.verified_query, 'SELECT id, total FROM orders WHERE customer_id = 42');
    assert.equal(result.conversation_id, agent.conversationId);
    assert.equal(result.step_number, 1);
    assert.match(result.action_id, /^act_/);
    assert.ok(result.attestation);

    const logged = await agent.logExecution({ actionId: result.action_id, success: true, attestation: result.attestation });
    assert.equal(logged.logged, true);
    assert.equal(logged.action_id, result.action_id);

    // The next generated step follows the committed one.
    const second = await agent.verifyAction({ type: 'calculate', query: '6*7' });
    assert.equal(second.decision, 'APPROVED');
    assert.equal(second.step_number, 2);
    assert.equal(agent.lastStep, 2);

    // Reads default to the agent itself, with its token.
    assert.equal((await agent.getAgent()).agent_id, agent.agentId);
    assert.equal((await agent.getState({ atTime: new Date() })).agent_id, agent.agentId);
    assert.ok((await agent.getBudget()).budget);
    const activity = await agent.getActivity({ limit: 10 });
    assert.equal(activity.activities.length, 2);
  });

  it('refuses to log an execution with another action\'s attestation, and logs nothing', async () => {
    const agent = await QWEDAgentClient.register({ baseUrl: gate.url, apiKey: key, name: 'Logger', principalId: 'org_agents', permissions: { allowed_engines: ['math'] } });
    const a = await agent.verifyAction({ type: 'calculate', query: '1+1' }, undefined, { options: { require_attestation: true } });
    const b = await agent.verifyAction({ type: 'calculate', query: '2+3' });
    assert.equal(b.decision, 'APPROVED');
    await assert.rejects(agent.logExecution({ actionId: b.action_id, success: true, attestation: a.attestation }), (e) => e instanceof AttestationError && e.code === 'QWED-SDK-ATTESTATION-MISMATCH');
    await assert.rejects(agent.logExecution({ actionId: a.action_id, success: true, attestation: a.attestation.slice(0, -4) + 'AAAA' }), (e) => e instanceof AttestationError && e.code === 'QWED-SDK-ATTESTATION-SIGNATURE');
    const logged = async () => (await agent.getActivity()).activities.filter((x) => x.cost.actual).map((x) => x.activity_id);
    assert.deepEqual(await logged(), []);
    // The right one is logged.
    assert.equal((await agent.logExecution({ actionId: a.action_id, success: true, attestation: a.attestation, costUsd: 0.01 })).logged, true);
    assert.deepEqual(await logged(), [a.action_id]);
  });

  it('QWED-Agent spec v1.1 §5.2: scans a declared output before the action and an executed one after it', async () => {
    const card = '4111 1111 1111 1111';
    const denier = await QWEDAgentClient.register({ baseUrl: gate.url, apiKey: key, name: 'Mailer', principalId: 'org_agents', trustLevel: 3 });
    const denied = await denier.verifyAction({ type: 'send_message', output: `your card ${card}` });
    assert.equal(denied.decision, 'DENIED');
    assert.equal(denied.error.code, 'QWED-SEC-003');
    assert.equal(JSON.stringify(denied).includes('4111'), false);
    const agent = await QWEDAgentClient.register({ baseUrl: gate.url, apiKey: key, name: 'Runner', principalId: 'org_agents', permissions: { allowed_engines: ['math'] } });
    const ok = await agent.verifyAction({ type: 'calculate', query: '6*7' });
    assert.equal(ok.decision, 'APPROVED');
    const out = `charged ${card}`;
    const logged = await agent.logExecution({ actionId: ok.action_id, success: true, output: out, sandboxed: true, sandbox: 'gvisor' });
    assert.equal(logged.pii_violation, true);
    assert.equal(logged.result_hash, 'sha256:' + createHash('sha256').update(out).digest('hex'));
    assert.deepEqual(logged.output_findings, [{ kind: 'card_number', location: 'output', offset: 8 }]);
    const [entry] = (await agent.getActivity()).activities.filter((x) => x.activity_id === ok.action_id);
    assert.equal(entry.execution.pii_violation, true);
    assert.equal(entry.execution.sandbox, 'gvisor');
  });

  it('reuses a denied step (denials do not commit it) and moves past a step committed elsewhere', async () => {
    const agent = await QWEDAgentClient.register({ baseUrl: gate.url, apiKey: key, name: 'Looper', principalId: 'org_agents', permissions: { allowed_engines: ['math'] } });
    const steps = [];
    for (let i = 0; i < 3; i++) steps.push(await agent.verifyAction({ type: 'calculate', query: '2+2' }));
    assert.deepEqual(steps.map((d) => d.decision), ['APPROVED', 'APPROVED', 'DENIED']);
    assert.equal(steps[2].error.code, 'QWED-AGENT-LOOP-003');
    assert.equal(steps[2].step_number, 3);
    assert.equal(steps[2].verified_query, undefined);
    // The step 3 retry with a different action succeeds on the same step number.
    const retry = await agent.verifyAction({ type: 'calculate', query: '3+3' });
    assert.equal(retry.step_number, 3);
    assert.equal(retry.decision, 'APPROVED');

    // Another client of the same agent commits step 4 in this conversation: the next generated
    // call is refused as a replay (LOOP-002) and moves past it.
    const other = new QWEDClient({ baseUrl: gate.url, agentToken: undefined, apiKey: undefined });
    const token = (await admin.rotateToken({ agentId: agent.agentId })).agent_token; // the admin rotates: the old token stops working
    const fresh = new QWEDAgentClient({ baseUrl: gate.url, agentId: agent.agentId, agentToken: token, conversationId: agent.conversationId, lastStep: 3 });
    const elsewhere = await other.verifyAction({ agentId: agent.agentId, agentToken: token, action: { type: 'calculate', query: '5+5' }, context: { conversation_id: agent.conversationId, step_number: 4 } });
    assert.equal(elsewhere.decision, 'APPROVED');
    const next = await fresh.verifyAction({ type: 'calculate', query: '7+7' });
    assert.equal(next.decision, 'APPROVED');
    assert.equal(next.step_number, 5);
    assert.equal(fresh.lastStep, 5);
    await assert.rejects(agent.verifyAction({ type: 'calculate', query: '8+8' }), AuthenticationError);
  });

  it('runs generated-context calls one at a time: concurrent calls get increasing steps', async () => {
    const agent = await QWEDAgentClient.register({ baseUrl: gate.url, apiKey: key, name: 'Concurrent', principalId: 'org_agents', permissions: { allowed_engines: ['math'] } });
    const all = await Promise.all([1, 2, 3, 4].map((n) => agent.verifyAction({ type: 'calculate', query: `${n}+${n}` })));
    assert.deepEqual(all.map((d) => d.step_number), [1, 2, 3, 4]);
    assert.ok(all.every((d) => d.decision === 'APPROVED'));
    agent.newConversation('conv_second');
    const d = await agent.verifyAction({ type: 'calculate', query: '9+9' });
    assert.equal(d.conversation_id, 'conv_second');
    assert.equal(d.step_number, 1);
  });

  it('rotates its own token and keeps working with the new one', async () => {
    const agent = await QWEDAgentClient.register({ baseUrl: gate.url, apiKey: key, name: 'Rotator', principalId: 'org_agents', permissions: { allowed_engines: ['math'] } });
    const r = await agent.rotateToken();
    assert.equal(r.agent_id, agent.agentId);
    assert.match(r.agent_token, /^qwed_agent_/);
    assert.equal((await agent.verifyAction({ type: 'calculate', query: '1+2' })).decision, 'APPROVED');
  });

  it('refuses a call for another agent than its own', async () => {
    const agent = new QWEDAgentClient({ baseUrl: gate.url, agentId: 'agent_a', agentToken: 'qwed_agent_x' });
    assert.throws(() => agent.verifyAction({ agentId: 'agent_b', action: { type: 'calculate', query: '1' } }), TypeError);
    await assert.rejects(async () => agent.verifyToolCall({ agentId: 'agent_b', toolName: 't' }), TypeError);
  });
});

describe('QWEDClient agent calls (QWED-Agent user guide)', () => {
  let client;
  let agentId;
  let token;
  before(async () => {
    client = new QWEDClient({ apiKey: key, baseUrl: gate.url });
    const agent = await client.registerAgent({
      name: 'DataAnalyst',
      type: 'supervised',
      principalId: 'org_agents',
      permissions: { allowed_engines: ['math', 'logic', 'sql'], blocked_tools: ['execute_code'] },
      budget: { max_daily_cost_usd: 1, max_requests_per_hour: 500 },
    });
    agentId = agent.agent_id;
    token = agent.agent_token;
    assert.match(token, /^qwed_agent_/);
  });

  it('answers the conversation controls as decisions, never as exceptions', async () => {
    const v = (query, step, conv = 'conv_1') => client.verifyAction({ agentId, agentToken: token, action: { type: 'calculate', query }, context: { conversation_id: conv, step_number: step } });
    assert.equal((await v('2+2', 1)).decision, 'APPROVED');
    assert.equal((await v('2+2', 2)).decision, 'APPROVED');
    const loop = await v('2+2', 3);
    assert.equal(loop.decision, 'DENIED');
    assert.equal(loop.error.code, 'QWED-AGENT-LOOP-003');
    assert.notEqual((await client.verifyAction({ agentId, agentToken: token, action: { type: 'verify_logic', query: 'x > 1' }, context: { conversation_id: 'conv_1', step_number: 3 } })).decision, 'DENIED');
    const replay = await v('3+3', 1);
    assert.equal(replay.decision, 'DENIED');
    assert.equal(replay.error.code, 'QWED-AGENT-LOOP-002');
    const limit = await v('4+4', 51, 'conv_limit');
    assert.equal(limit.error.code, 'QWED-AGENT-LOOP-001');
  });

  it('answers BUDGET_EXCEEDED (HTTP 429) as a decision, sent once (a decision is never retried)', async () => {
    let sent = 0;
    const counting = new QWEDClient({ baseUrl: gate.url, agentToken: token, fetch: (u, i) => { sent++; return fetch(u, i); } });
    const d = await counting.verifyAction({ agentId, action: { type: 'calculate', query: '1+1', estimated_cost_usd: 5.0 }, context: { conversation_id: 'conv_budget', step_number: 1 } });
    assert.equal(d.decision, 'BUDGET_EXCEEDED');
    assert.equal(d.error.code, 'QWED-AGENT-BUDGET-001');
    assert.equal(sent, 1);
    const budget = await client.getAgentBudget(agentId);
    assert.equal(budget.budget.cost.max_daily_usd, 1);
  });

  it('throws typed errors for refused requests, with the gate\'s code', async () => {
    await assert.rejects(client.verifyAction({ agentId, agentToken: token, action: { type: 'calculate', query: '1' }, context: {} }), (e) => e instanceof ValidationError && e.code === 'QWED-AGENT-CTX-001' && e.status === 400 && e.details.field === 'context.conversation_id');
    await assert.rejects(client.verifyAction({ agentId, agentToken: 'qwed_agent_wrong', action: { type: 'calculate', query: '1' }, context: { conversation_id: 'c', step_number: 1 } }), (e) => e instanceof AuthenticationError && e.code === 'QWED-AGENT-002' && e.status === 401);
    await assert.rejects(client.getAgent('agent_missing'), (e) => e instanceof NotFoundError && e.code === 'QWED-AGENT-001' && e.details.agent_id === 'agent_missing');
    const otherKey = (await admin.issuePrincipalKey({ principalId: 'org_other' })).api_key;
    const other = new QWEDClient({ apiKey: otherKey, baseUrl: gate.url });
    await assert.rejects(other.getAgent(agentId), (e) => e instanceof PermissionDeniedError || e instanceof NotFoundError);
  });

  it('verifies a tool call: PENDING, listed, approved by the principal, read by the agent', async () => {
    const d = await client.verifyToolCall({ agentId, agentToken: token, toolName: 'send_email', parameters: { to: 'user@example.com' }, justification: 'User asked for an order update' });
    assert.equal(d.decision, 'PENDING');
    assert.equal(d.tool_name, 'send_email');
    const id = d.approval.approval_id;
    const pending = await client.listApprovals({ status: 'pending' });
    assert.ok(pending.approvals.some((a) => a.approval_id === id));
    const approved = await client.approve({ approvalId: id, reason: 'ok' });
    assert.equal(approved.approval.status, 'approved');
    const asAgent = new QWEDClient({ baseUrl: gate.url, agentToken: token });
    assert.equal((await asAgent.getApproval(id)).status, 'approved');

    const d2 = await client.verifyToolCall({ agentId, agentToken: token, toolName: 'send_email', parameters: { to: 'other@example.com' } });
    const denied = await client.deny({ approvalId: d2.approval.approval_id, reason: 'no' });
    assert.equal(denied.approval.status, 'denied');
    const blocked = await client.verifyToolCall({ agentId, agentToken: token, toolName: 'execute_code', parameters: {} });
    assert.equal(blocked.decision, 'DENIED');
  });

  it('reads the activity page by page, the state and the compliance report in its three formats', async () => {
    const act = await client.getAgentActivity(agentId, { limit: 2 });
    assert.equal(act.activities.length, 2);
    assert.ok(act.summary);
    // The user guide's "for entry in activity": a page iterates over its entries.
    const entries = [];
    for (const entry of act) entries.push(`${entry.timestamp}: ${entry.action.type} -> ${entry.decision}`);
    assert.equal(entries.length, 2);
    assert.equal(JSON.stringify(act).includes('Symbol'), false);
    // All of them, two a page, in log order, each once.
    const all = [];
    for await (const entry of client.iterateAgentActivity(agentId, { limit: 2 })) all.push(entry);
    const everything = (await client.getAgentActivity(agentId, { limit: 1000 })).activities;
    assert.ok(all.length > 2);
    assert.deepEqual(all.map((e) => e.seq), everything.map((e) => e.seq));
    const approvals = [];
    for await (const a of client.iterateApprovals({ limit: 1 })) approvals.push(a.approval_id);
    assert.deepEqual(approvals, (await client.listApprovals({ limit: 1000 })).approvals.map((a) => a.approval_id));
    assert.ok(approvals.length >= 2);
    const state = await client.getAgentState(agentId, { atTime: new Date() });
    assert.equal(state.agent_id, agentId);
    const json = await client.exportComplianceReport(agentId);
    assert.equal(typeof json, 'object');
    const csv = await client.exportComplianceReport(agentId, { format: 'csv' });
    assert.match(csv, /^section,/);
    const pdf = await client.exportComplianceReport(agentId, { format: 'pdf' });
    assert.ok(pdf instanceof Uint8Array);
    assert.equal(new TextDecoder().decode(pdf.subarray(0, 5)), '%PDF-');
  });

  it('changes trust, suspends and reinstates, files a complaint, rotates and revokes the token', async () => {
    const reg = await client.registerAgent({ name: 'Lifecycle', type: 'supervised', principalId: 'org_agents', permissions: { allowed_engines: ['math'] } });
    const id = reg.agent_id;
    const asAgent = new QWEDClient({ baseUrl: gate.url, agentToken: reg.agent_token });
    // Without fromLevel the client reads the agent's level (1) first: the gate checks it.
    const req = await asAgent.requestTrust({ agentId: id, toLevel: 2, justification: 'a week without incident' });
    assert.equal(req.accepted, true);
    assert.equal(req.approval.kind, 'trust_elevation');
    assert.equal(req.approval.status, 'pending');
    const set = await client.setTrustLevel({ agentId: id, trustLevel: 'autonomous', reason: 'reviewed' });
    assert.equal(set.previous_trust_level, 1);
    assert.equal(set.trust_level, 2);
    assert.equal((await client.getAgent(id)).trust_level, 2);
    assert.equal((await client.suspendAgent({ agentId: id, reason: 'investigation' })).status, 'suspended');
    await assert.rejects(asAgent.verifyAction({ agentId: id, action: { type: 'calculate', query: '1+1' }, context: { conversation_id: 'c', step_number: 1 } }), (e) => e.code === 'QWED-AGENT-003');
    await client.resumeAgent({ agentId: id, reason: 'cleared' });
    assert.equal((await asAgent.verifyAction({ agentId: id, action: { type: 'calculate', query: '1+1' }, context: { conversation_id: 'c', step_number: 1 } })).decision, 'APPROVED');
    await client.fileComplaint({ agentId: id, reason: 'spam' });
    assert.equal((await client.getAgent(id)).status, 'suspended');
    await client.suspendAgent({ agentId: id, suspended: false });
    const rotated = await asAgent.rotateToken({ agentId: id });
    await assert.rejects(asAgent.getAgent(id), AuthenticationError);
    const revoked = await client.revokeToken({ agentId: id });
    assert.equal(revoked.token_revoked, true);
    await assert.rejects(new QWEDClient({ baseUrl: gate.url, agentToken: rotated.agent_token }).getAgent(id), AuthenticationError);
  });
});
