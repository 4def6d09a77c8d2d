// The LangChain.js handler against the real @langchain/core (pinned by
// package-lock.json) and a real gate process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tool, DynamicTool } from '@langchain/core/tools';
import { RunnableLambda } from '@langchain/core/runnables';
import { AIMessage } from '@langchain/core/messages';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { QWEDClient, AuthenticationError, APIConnectionError } from '@agentgate/sdk';
import { QWEDVerificationCallback, ToolCallRefusedError, APPROVAL_REQUIRED } from '@agentgate/integrations/langchain';
import { eachDeployment, setupPrincipal, call, waitFor } from './fixtures.mjs';

eachDeployment((ctx) => {
  // tools whose bodies count their runs: a refused call must leave them at 0
  function makeTools() {
    const runs = { search_db: 0, send_email: 0, archive_file: 0, execute_code: 0 };
    const mk = (name) => tool(async (args) => {
      runs[name] += 1;
      return `${name} ran with ${JSON.stringify(args)}`;
    }, { name, description: `the ${name} tool`, schema: z.object({ q: z.string() }) });
    return { runs, search_db: mk('search_db'), send_email: mk('send_email'), archive_file: mk('archive_file'), execute_code: mk('execute_code') };
  }

  async function activity(p) {
    const r = await call(ctx.gate, 'GET', `/agents/${p.agentId}/activity`, { key: p.key });
    assert.equal(r.status, 200, r.text);
    return r.body.activities;
  }

  test('an approved tool call runs, and the gate recorded it', async () => {
    const p = await setupPrincipal(ctx.gate, 'org_lc_ok');
    const t = makeTools();
    const handler = new QWEDVerificationCallback({ client: new QWEDClient({ baseUrl: ctx.gate.url, agentToken: p.token, maxRetries: 0 }), agentId: p.agentId });
    const out = await t.search_db.invoke({ q: 'orders of 42' }, { callbacks: [handler] });
    assert.equal(out, 'search_db ran with {"q":"orders of 42"}');
    assert.equal(t.runs.search_db, 1);
    assert.equal(handler.lastDecision.decision, 'APPROVED');
    // a tool call as an agent executor sends it (a ToolCall): the same check, a ToolMessage back
    const msg = await t.search_db.invoke({ name: 'search_db', args: { q: 'x' }, id: 'call_1', type: 'tool_call' }, { callbacks: [handler] });
    assert.equal(msg.tool_call_id, 'call_1');
    assert.equal(t.runs.search_db, 2);
    // a string-input tool: its input is sent as {input}
    const plain = new DynamicTool({ name: 'search_db', description: 'plain', func: async (q) => `plain ${q}` });
    assert.equal(await plain.invoke('customer 7', { callbacks: [handler] }), 'plain customer 7');
    const acts = await activity(p);
    const calls = acts.filter((a) => a.action?.type === 'tool_call' && a.action?.tool === 'search_db');
    assert.equal(calls.length, 3);
    assert.deepEqual(calls.map((a) => a.decision), ['APPROVED', 'APPROVED', 'APPROVED']);
    assert.ok(calls.some((a) => a.action.parameters?.q === 'orders of 42'), JSON.stringify(calls));
    assert.ok(calls.some((a) => a.action.parameters?.input === 'customer 7'), JSON.stringify(calls));
  });

  test('callbacks given to a parent runnable are inherited by the tool it calls', async () => {
    const p = await setupPrincipal(ctx.gate, 'org_lc_inherit');
    const t = makeTools();
    const handler = new QWEDVerificationCallback({ client: new QWEDClient({ baseUrl: ctx.gate.url, agentToken: p.token, maxRetries: 0 }), agentId: p.agentId });
    const chain = RunnableLambda.from(async (input, config) => t.send_email.invoke(input, config));
    await assert.rejects(chain.invoke({ q: 'mail the board' }, { callbacks: [handler] }), (e) => {
      assert.ok(e instanceof ToolCallRefusedError, String(e));
      assert.equal(e.code, 'QWED-AGENT-TRUST-001');
      return true;
    });
    assert.equal(t.runs.send_email, 0);
  });

  test('LangGraph\'s ToolNode: the approved call runs, the refused one returns to the model as an error', async () => {
    const p = await setupPrincipal(ctx.gate, 'org_lc_graph');
    const t = makeTools();
    const handler = new QWEDVerificationCallback({ client: new QWEDClient({ baseUrl: ctx.gate.url, agentToken: p.token, maxRetries: 0 }), agentId: p.agentId });
    // the node an agent graph (createReactAgent) runs the model's tool calls with
    const node = new ToolNode([t.search_db, t.send_email]);
    const calls = [{ id: 'c1', name: 'search_db', args: { q: 'orders' } }, { id: 'c2', name: 'send_email', args: { q: 'board' } }];
    const out = await node.invoke({ messages: [new AIMessage({ content: '', tool_calls: calls })] }, { callbacks: [handler] });
    const byId = Object.fromEntries(out.messages.map((m) => [m.tool_call_id, m]));
    assert.equal(byId.c1.status, 'success');
    assert.equal(byId.c1.content, 'search_db ran with {"q":"orders"}');
    assert.equal(byId.c2.status, 'error');
    assert.match(byId.c2.content, /agentgate refused tool 'send_email': DENIED QWED-AGENT-TRUST-001: trust level 1 \(supervised\) is insufficient for high risk/);
    assert.deepEqual([t.runs.search_db, t.runs.send_email], [1, 0]);
  });

  test('a refused tool does not run; the error carries the gate\'s decision, code and reason', async () => {
    const p = await setupPrincipal(ctx.gate, 'org_lc_refused');
    const t = makeTools();
    const handler = new QWEDVerificationCallback({ client: new QWEDClient({ baseUrl: ctx.gate.url, agentToken: p.token, maxRetries: 0 }), agentId: p.agentId });
    // send_email is high risk: a supervised agent's trust is insufficient
    await assert.rejects(t.send_email.invoke({ q: 'hi' }, { callbacks: [handler] }), (e) => {
      assert.ok(e instanceof ToolCallRefusedError, String(e));
      assert.equal(e.decision, 'DENIED');
      assert.equal(e.code, 'QWED-AGENT-TRUST-001');
      assert.match(e.reason, /insufficient for high risk/);
      assert.equal(e.toolName, 'send_email');
      assert.match(e.actionId, /^act_/);
      assert.match(e.message, /QWED-AGENT-TRUST-001/);
      return true;
    });
    // execute_code is on the agent's blocklist
    await assert.rejects(t.execute_code.invoke({ q: 'rm -rf /' }, { callbacks: [handler] }), (e) => {
      assert.ok(e instanceof ToolCallRefusedError);
      assert.equal(e.code, 'QWED-AGENT-004');
      assert.equal(e.details.tool, 'execute_code');
      return true;
    });
    assert.equal(t.runs.send_email, 0);
    assert.equal(t.runs.execute_code, 0);
    const denied = (await activity(p)).filter((a) => a.decision === 'DENIED').map((a) => a.action.tool).sort();
    assert.deepEqual(denied, ['execute_code', 'send_email']);
  });

  test('a PENDING call is refused with its approval id, or runs once a human approves it', async () => {
    const p = await setupPrincipal(ctx.gate, 'org_lc_pending');
    const t = makeTools();
    const client = new QWEDClient({ baseUrl: ctx.gate.url, agentToken: p.token, maxRetries: 0 });
    // archive_file is medium risk: a supervised agent needs an approval
    const refuse = new QWEDVerificationCallback({ client, agentId: p.agentId });
    let first;
    await assert.rejects(t.archive_file.invoke({ q: 'q3.pdf' }, { callbacks: [refuse] }), (e) => {
      assert.ok(e instanceof ToolCallRefusedError);
      assert.equal(e.decision, 'PENDING');
      assert.equal(e.code, APPROVAL_REQUIRED);
      assert.match(e.approvalId, /^act_/);
      first = e.approvalId;
      return true;
    });
    assert.equal(t.runs.archive_file, 0);

    // approvalWaitMs: the handler polls the approval; the principal approves it meanwhile
    const wait = new QWEDVerificationCallback({ client, agentId: p.agentId, approvalWaitMs: 30_000, approvalPollMs: 20, justification: 'quarterly archive' });
    const running = t.archive_file.invoke({ q: 'q4.pdf' }, { callbacks: [wait] });
    const pending = await waitFor(async () => {
      const r = await call(ctx.gate, 'GET', '/approvals?status=pending', { key: p.key });
      return (r.body.approvals ?? []).find((a) => a.approval_id !== first);
    }, 10_000, 'the pending approval');
    const ok = await call(ctx.gate, 'POST', `/approvals/${pending.approval_id}/approve`, { key: p.key, body: { reason: 'ok' } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(await running, 'archive_file ran with {"q":"q4.pdf"}');
    assert.equal(t.runs.archive_file, 1);

    // a denied approval: refused, the tool does not run
    // settled into a value at once: the refusal may come before the deny call below returns
    const denied = t.archive_file.invoke({ q: 'q5.pdf' }, { callbacks: [wait] }).then(() => assert.fail('the tool ran'), (e) => e);
    const next = await waitFor(async () => {
      const r = await call(ctx.gate, 'GET', '/approvals?status=pending', { key: p.key });
      return (r.body.approvals ?? []).find((a) => a.approval_id !== first);
    }, 10_000, 'the pending approval');
    await call(ctx.gate, 'POST', `/approvals/${next.approval_id}/deny`, { key: p.key, body: { reason: 'not now' } });
    const e = await denied;
    assert.ok(e instanceof ToolCallRefusedError, String(e));
    assert.equal(e.code, APPROVAL_REQUIRED);
    assert.match(e.reason, /was denied: not now/);
    assert.equal(t.runs.archive_file, 1);
  });

  test('fail closed: a bad token or an unreachable gate stops the tool', async () => {
    const p = await setupPrincipal(ctx.gate, 'org_lc_closed');
    const t = makeTools();
    const bad = new QWEDVerificationCallback({ client: new QWEDClient({ baseUrl: ctx.gate.url, agentToken: 'qwed_agent_not_the_token', maxRetries: 0 }), agentId: p.agentId });
    await assert.rejects(t.search_db.invoke({ q: 'x' }, { callbacks: [bad] }), (e) => {
      assert.ok(e instanceof AuthenticationError, String(e));
      assert.equal(e.code, 'QWED-AGENT-002');
      assert.doesNotMatch(`${e.message} ${JSON.stringify(e)}`, /qwed_agent_not_the_token/);
      return true;
    });
    // a port nothing listens on: the gate's answer never comes
    const down = new QWEDVerificationCallback({ client: new QWEDClient({ baseUrl: 'http://127.0.0.1:9', agentToken: p.token, maxRetries: 0 }), agentId: p.agentId });
    await assert.rejects(t.search_db.invoke({ q: 'x' }, { callbacks: [down] }), (e) => e instanceof APIConnectionError);
    assert.equal(t.runs.search_db, 0);
  });

  test('the handler refuses to be built without a client and an agent', () => {
    assert.throws(() => new QWEDVerificationCallback({ agentId: 'a' }), TypeError);
    assert.throws(() => new QWEDVerificationCallback({ client: new QWEDClient({ baseUrl: ctx.gate.url }), agentId: '' }), TypeError);
  });
});
