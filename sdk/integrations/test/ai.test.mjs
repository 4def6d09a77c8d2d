// The Vercel AI SDK wrapper against the real `ai` package (pinned by
// package-lock.json): generateText drives the wrapped tools as in production;
// the language model is the package's own MockLanguageModelV3 (a scripted
// model, offline), the gate a real process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { QWEDClient, APIConnectionError, APIUserAbortError } from '@agentgate/sdk';
import { gateTool, gateTools, ToolCallRefusedError } from '@agentgate/integrations/ai';
import { eachDeployment, setupPrincipal, call } from './fixtures.mjs';

eachDeployment((ctx) => {
  const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

  /** a model whose one answer calls the given tools (name -> input) */
  function modelCalling(calls) {
    return new MockLanguageModelV3({
      doGenerate: async () => ({
        content: Object.entries(calls).map(([toolName, input], i) => ({ type: 'tool-call', toolCallId: `call_${i}`, toolName, input: JSON.stringify(input) })),
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      }),
    });
  }

  function counted() {
    const runs = {};
    const mk = (name) => tool({
      description: `the ${name} tool`,
      inputSchema: z.object({ q: z.string() }),
      execute: async ({ q }, { toolCallId }) => {
        runs[name] = (runs[name] ?? 0) + 1;
        return { tool: name, q, toolCallId };
      },
    });
    return { runs, tools: { search_db: mk('search_db'), send_email: mk('send_email'), execute_code: mk('execute_code') } };
  }

  test('generateText: the approved tool runs, the refused ones do not and report the gate\'s code', async () => {
    const p = await setupPrincipal(ctx.gate, 'org_ai_gen');
    const { runs, tools } = counted();
    const client = new QWEDClient({ baseUrl: ctx.gate.url, agentToken: p.token, maxRetries: 0 });
    const gated = gateTools(tools, { client, agentId: p.agentId });
    // one step, two calls run concurrently: search_db (low risk) and send_email (high risk)
    const result = await generateText({
      model: modelCalling({ search_db: { q: 'orders of 42' }, send_email: { q: 'to the board' } }),
      tools: gated,
      prompt: 'do it',
    });
    assert.deepEqual(runs, { search_db: 1 });
    const ok = result.content.find((c) => c.type === 'tool-result');
    assert.equal(ok.toolName, 'search_db');
    assert.deepEqual(ok.output, { tool: 'search_db', q: 'orders of 42', toolCallId: 'call_0' });
    const refused = result.content.find((c) => c.type === 'tool-error');
    assert.equal(refused.toolName, 'send_email');
    assert.ok(refused.error instanceof ToolCallRefusedError, String(refused.error));
    assert.equal(refused.error.code, 'QWED-AGENT-TRUST-001');
    assert.equal(refused.error.decision, 'DENIED');
    // a blocked tool, in a later step (the gate lowers the agent's trust for it: a security violation)
    const blocked = await generateText({ model: modelCalling({ execute_code: { q: 'rm -rf /' } }), tools: gated, prompt: 'now this' });
    const err = blocked.content.find((c) => c.type === 'tool-error');
    assert.equal(err.error.code, 'QWED-AGENT-004');
    assert.match(err.error.reason, /blocked/);
    assert.deepEqual(runs, { search_db: 1 });
    // the gate saw the model's arguments
    const r = await call(ctx.gate, 'GET', `/agents/${p.agentId}/activity`, { key: p.key });
    const seen = Object.fromEntries(r.body.activities.map((a) => [a.action.tool, [a.decision, a.action.parameters]]));
    assert.deepEqual(seen, {
      search_db: ['APPROVED', { q: 'orders of 42' }],
      send_email: ['DENIED', { q: 'to the board' }],
      execute_code: ['DENIED', { q: 'rm -rf /' }],
    });
  });

  test('a streaming execute stays a generator and yields only after approval', async () => {
    const p = await setupPrincipal(ctx.gate, 'org_ai_stream');
    const client = new QWEDClient({ baseUrl: ctx.gate.url, agentToken: p.token, maxRetries: 0 });
    let started = 0;
    const streaming = (name) => gateTool(name, tool({
      description: 'streams',
      inputSchema: z.object({ q: z.string() }),
      async* execute({ q }) {
        started += 1;
        yield `${q}:1`;
        yield `${q}:2`;
      },
    }), { client, agentId: p.agentId });
    const got = [];
    for await (const v of streaming('search_db').execute({ q: 'a' }, { toolCallId: 't1', messages: [] })) got.push(v);
    assert.deepEqual(got, ['a:1', 'a:2']);
    const refused = streaming('send_email').execute({ q: 'b' }, { toolCallId: 't2', messages: [] });
    await assert.rejects(refused.next(), (e) => e instanceof ToolCallRefusedError && e.code === 'QWED-AGENT-TRUST-001');
    assert.equal(started, 1);
  });

  test('the wrapper keeps the tool\'s other members; a tool without execute is unchanged', async () => {
    const client = new QWEDClient({ baseUrl: ctx.gate.url, agentToken: 'qwed_agent_unused' });
    const schema = z.object({ q: z.string() });
    const orig = tool({ description: 'client side', inputSchema: schema });
    assert.equal(gateTool('ask_user', orig, { client, agentId: 'agent_x' }), orig);
    const wrapped = gateTool('search_db', tool({ description: 'd', inputSchema: schema, execute: async () => 1 }), { client, agentId: 'agent_x' });
    assert.equal(wrapped.description, 'd');
    assert.equal(wrapped.inputSchema, schema);
    assert.throws(() => gateTool('', orig, { client, agentId: 'a' }), TypeError);
    assert.throws(() => gateTools({ t: orig }, { client }), TypeError);
  });

  test('fail closed: an unreachable gate is the tool\'s error, and the tool does not run', async () => {
    const { runs, tools } = counted();
    const client = new QWEDClient({ baseUrl: 'http://127.0.0.1:9', agentToken: 'qwed_agent_x', maxRetries: 0 });
    const result = await generateText({ model: modelCalling({ search_db: { q: 'x' } }), tools: gateTools(tools, { client, agentId: 'agent_x' }), prompt: 'go' });
    const err = result.content.find((c) => c.type === 'tool-error');
    assert.ok(err.error instanceof APIConnectionError, String(err.error));
    assert.deepEqual(runs, {});
    // the call's abortSignal reaches the gate's request: aborted, the tool does not run
    const p = await setupPrincipal(ctx.gate, 'org_ai_abort');
    const live = new QWEDClient({ baseUrl: ctx.gate.url, agentToken: p.token, maxRetries: 0 });
    const ac = new AbortController();
    ac.abort(new Error('the user stopped'));
    const gated = gateTools(tools, { client: live, agentId: p.agentId });
    await assert.rejects(gated.search_db.execute({ q: 'x' }, { toolCallId: 't', messages: [], abortSignal: ac.signal }), (e) => e instanceof APIUserAbortError);
    assert.deepEqual(runs, {});
  });
});
