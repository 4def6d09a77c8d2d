// The MCP server as an MCP client sees it: the real @modelcontextprotocol/sdk
// Client over StdioClientTransport spawns `npx agentgate-mcp` (this package's
// bin), which talks to a real gate process.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { eachDeployment, setupPrincipal, call } from '../../integrations/test/fixtures.mjs';

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..');
// the executable of package.json's bin
const bin = join(pkgDir, JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).bin['agentgate-mcp']);

eachDeployment((ctx) => {
  let p; // principal, agent and token of the server's credentials
  let mcp; // { client, transport, stderr() }
  // every text the server sent or logged, searched for the credentials at the end
  const seen = [];

  /**
   * connect spawns agentgate-mcp with env and connects an MCP client to it:
   * as users start it, `npx agentgate-mcp` (the package's bin); with direct,
   * node on the bin's file (the same program, without npx's start-up time).
   */
  async function connect(env, { direct = false } = {}) {
    const [command, args] = direct ? [process.execPath, [bin]] : ['npx', ['--no', '--', 'agentgate-mcp']];
    const transport = new StdioClientTransport({ command, args, cwd: pkgDir, env, stderr: 'pipe' });
    let stderr = '';
    transport.stderr.on('data', (b) => {
      stderr += b.toString();
    });
    const client = new Client({ name: 'tsint-test', version: '1.0.0' });
    try {
      await client.connect(transport);
    } catch (e) {
      throw new Error(`connecting to agentgate-mcp: ${e.message}; its stderr: ${stderr}`);
    }
    return { client, transport, stderr: () => stderr };
  }

  /** tool calls a tool and records what came back; a protocol error is returned, not thrown. */
  async function tool(name, args, c = mcp.client) {
    let r;
    try {
      r = await c.callTool({ name, arguments: args });
    } catch (e) {
      r = { protocolError: e };
      seen.push(String(e.message));
      return r;
    }
    seen.push(JSON.stringify(r));
    return r;
  }

  before(async () => {
    p = await setupPrincipal(ctx.gate, 'org_mcp');
    mcp = await connect({ AGENTGATE_URL: ctx.gate.url, AGENTGATE_API_KEY: p.key, AGENTGATE_AGENT_TOKEN: p.token });
  });

  after(async () => {
    await mcp?.client.close();
  });

  test('the server lists its four tools with bounded input schemas', async () => {
    const { tools } = await mcp.client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.deepEqual(Object.keys(byName).sort(), ['a2a_intercept', 'get_approval', 'verify_action', 'verify_tool_call']);
    const va = byName.verify_action.inputSchema;
    assert.deepEqual(va.required.sort(), ['action', 'agent_id']);
    assert.equal(va.properties.agent_id.maxLength, 256);
    assert.equal(va.properties.action.properties.query.maxLength, 100_000);
    assert.equal(va.properties.action.additionalProperties, false);
    assert.deepEqual(byName.verify_tool_call.inputSchema.required.sort(), ['agent_id', 'tool_name']);
    assert.deepEqual(byName.a2a_intercept.inputSchema.properties.payload_type.enum.sort(),
      ['code_execution', 'data_query', 'financial_transaction', 'general', 'logic_assertion']);
    assert.equal(byName.get_approval.annotations.readOnlyHint, true);
    for (const t of tools) assert.ok(t.description.length > 40, t.name);
  });

  test('verify_tool_call: an approved and a refused call, decisions as results with the gate\'s code', async () => {
    const ok = await tool('verify_tool_call', { agent_id: p.agentId, tool_name: 'search_db', parameters: { q: 'orders' } });
    assert.equal(ok.isError, undefined);
    assert.equal(ok.structuredContent.decision, 'APPROVED');
    assert.match(ok.content[0].text, /^APPROVED\n\{/);
    const no = await tool('verify_tool_call', { agent_id: p.agentId, tool_name: 'send_email', parameters: { to: 'board@example.com' } });
    assert.equal(no.structuredContent.decision, 'DENIED');
    assert.equal(no.structuredContent.error.code, 'QWED-AGENT-TRUST-001');
    assert.match(no.content[0].text, /^DENIED QWED-AGENT-TRUST-001: trust level 1 \(supervised\) is insufficient for high risk\n/);
  });

  test('verify_action: a generated context steps forward; an explicit one is used as given', async () => {
    const a = await tool('verify_action', { agent_id: p.agentId, action: { type: 'calculate', query: '2+2' } });
    const b = await tool('verify_action', { agent_id: p.agentId, action: { type: 'calculate', query: '3*3' } });
    assert.equal(a.structuredContent.decision, 'APPROVED', a.content[0].text);
    assert.equal(b.structuredContent.decision, 'APPROVED', b.content[0].text);
    assert.equal(a.structuredContent.conversation_id, b.structuredContent.conversation_id);
    assert.match(a.structuredContent.conversation_id, /^mcp_[0-9a-f]{16}_1$/);
    assert.deepEqual([a.structuredContent.step_number, b.structuredContent.step_number], [1, 2]);
    // a wrong claim: the math engine's correction, named on the first line
    const fixed = await tool('verify_action', { agent_id: p.agentId, action: { type: 'calculate', query: '2+2=5' } });
    assert.equal(fixed.structuredContent.decision, 'CORRECTED', fixed.content[0].text);
    assert.equal(fixed.structuredContent.step_number, 3);
    assert.equal(fixed.content[0].text.split('\n')[0], 'CORRECTED: take corrected_action instead: 2 + 2 = 4');
    // the same step again in an explicit conversation: the gate's replay refusal, as a decision
    const ctx = { conversation_id: 'conv_explicit', step_number: 1 };
    const c = await tool('verify_action', { agent_id: p.agentId, action: { type: 'calculate', query: '1+1' }, context: ctx, require_attestation: true });
    assert.equal(c.structuredContent.decision, 'APPROVED');
    assert.match(c.structuredContent.attestation, /^eyJ/);
    const d = await tool('verify_action', { agent_id: p.agentId, action: { type: 'calculate', query: '5+5' }, context: ctx });
    assert.equal(d.structuredContent.decision, 'DENIED');
    assert.equal(d.structuredContent.error.code, 'QWED-AGENT-LOOP-002');
  });

  test('get_approval: a PENDING tool call\'s approval, before and after the principal approves it', async () => {
    const pending = await tool('verify_tool_call', { agent_id: p.agentId, tool_name: 'archive_file', parameters: { file: 'q3.pdf' }, justification: 'quarterly archive' });
    assert.equal(pending.structuredContent.decision, 'PENDING');
    const id = pending.structuredContent.approval.approval_id;
    assert.match(pending.content[0].text, new RegExp(`^PENDING approval ${id} awaits a human`));
    // the code QWED-AGENT-TRUST-002 a PENDING reply carries follows the approval, once
    assert.match(pending.content[0].text.split('\n')[0], /awaits a human[^\n]*\(QWED-AGENT-TRUST-002\)$/);
    const before = await tool('get_approval', { approval_id: id });
    assert.equal(before.structuredContent.status, 'pending');
    assert.equal(before.content[0].text.split('\n')[0], `approval ${id}: pending`);
    const ok = await call(ctx.gate, 'POST', `/approvals/${id}/approve`, { key: p.key, body: { reason: 'fine' } });
    assert.equal(ok.status, 200, ok.text);
    const afterwards = await tool('get_approval', { approval_id: id });
    assert.equal(afterwards.structuredContent.status, 'approved');
    assert.equal(afterwards.structuredContent.reason, 'fine');
    const missing = await tool('get_approval', { approval_id: 'act_00000000000000000000' });
    assert.equal(missing.isError, true);
    assert.equal(missing.structuredContent.error.status, 404);
    assert.match(missing.content[0].text, /^QWED-[A-Z0-9-]+: /);
  });

  test('a2a_intercept: forwarded with an attestation, blocked with the reason', async () => {
    for (const a of ['procurement-agent', 'treasury-agent']) {
      const r = await call(ctx.gate, 'POST', `/a2a/boundary/trust/${a}`, { key: p.key });
      assert.equal(r.status, 200, r.text);
    }
    const items = [{ description: 'Widget A', amount: 50, quantity: 2 }, { description: 'Widget B', amount: 25, quantity: 2 }];
    const msg = (total) => ({
      sender_agent_id: 'procurement-agent', receiver_agent_id: 'treasury-agent', payload_type: 'financial_transaction',
      payload: { data: { claimed_total: total, line_items: items } }, trace_id: 'mcp_trace_1',
    });
    const fwd = await tool('a2a_intercept', msg(150));
    assert.equal(fwd.structuredContent.status, 'forwarded', fwd.content[0].text);
    assert.equal(fwd.structuredContent.engine_used, 'finance_guard');
    assert.match(fwd.structuredContent.attestation_jwt, /^eyJ/);
    assert.equal(fwd.content[0].text.split('\n')[0], 'forwarded by finance_guard: Financial totals verified');
    const blocked = await tool('a2a_intercept', msg(999.99));
    assert.equal(blocked.structuredContent.status, 'blocked');
    assert.match(blocked.content[0].text, /^blocked by finance_guard: Mathematical hallucination detected: claimed_total=999\.99, computed_total=150\.00/);
  });

  test('a server with only the principal\'s key verifies its agents\' calls and reads their approvals', async () => {
    const keyOnly = await connect({ AGENTGATE_URL: ctx.gate.url, AGENTGATE_API_KEY: p.key }, { direct: true });
    try {
      const r = await tool('verify_tool_call', { agent_id: p.agentId, tool_name: 'archive_file', parameters: { file: 'x' } }, keyOnly.client);
      assert.equal(r.structuredContent.decision, 'PENDING', r.content[0].text);
      const a = await tool('get_approval', { approval_id: r.structuredContent.approval.approval_id }, keyOnly.client);
      assert.equal(a.structuredContent.status, 'pending');
    } finally {
      await keyOnly.client.close();
    }
  });

  test('a refused request is a tool error with the gate\'s code, without the credential', async () => {
    const bad = await connect({ AGENTGATE_URL: ctx.gate.url, AGENTGATE_AGENT_TOKEN: 'qwed_agent_wrong_token_for_the_test' }, { direct: true });
    try {
      const r = await tool('verify_tool_call', { agent_id: p.agentId, tool_name: 'search_db' }, bad.client);
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.error.code, 'QWED-AGENT-002');
      assert.equal(r.structuredContent.error.status, 401);
      assert.match(r.content[0].text, /^QWED-AGENT-002: /);
      const all = JSON.stringify(r) + bad.stderr();
      assert.doesNotMatch(all, /qwed_agent_wrong_token_for_the_test/);
      // a gate that does not answer
      const down = await connect({ AGENTGATE_URL: 'http://127.0.0.1:9', AGENTGATE_API_KEY: 'qwed_key_unreachable_secret' }, { direct: true });
      try {
        const d = await tool('get_approval', { approval_id: 'act_1' }, down.client);
        assert.equal(d.isError, true);
        assert.equal(d.structuredContent.error.code, 'QWED-SDK-CONNECTION');
        assert.doesNotMatch(JSON.stringify(d) + down.stderr(), /qwed_key_unreachable_secret/);
      } finally {
        await down.client.close();
      }
    } finally {
      await bad.client.close();
    }
  });

  // mulberry32: a fixed-seed generator, so every run sends the same arguments
  function rng(seed) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  function randomValue(r, depth = 0) {
    const k = Math.floor(r() * (depth > 3 ? 5 : 7));
    switch (k) {
      case 0: return null;
      case 1: return r() < 0.5;
      case 2: return [0, -1, 1e308, -0.5, 2 ** 53, NaN][Math.floor(r() * 6)];
      case 3: return ['', 'x'.repeat(Math.floor(r() * 600)), 'agent_\u0000\u202e', '\ud800', '{"a":1}', 'act_1'][Math.floor(r() * 6)];
      case 4: return p.agentId;
      case 5: return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
      default: {
        const o = {};
        const keys = ['agent_id', 'tool_name', 'parameters', 'action', 'context', 'approval_id', 'payload', 'payload_type', 'type', 'query', 'step_number', 'x'];
        for (let i = Math.floor(r() * 5); i > 0; i--) o[keys[Math.floor(r() * keys.length)]] = randomValue(r, depth + 1);
        return o;
      }
    }
  }

  test('malformed arguments are refused before any request, and the server keeps serving', async () => {
    const nest = (n) => {
      let v = { leaf: 1 };
      for (let i = 0; i < n; i++) v = { v };
      return v;
    };
    const cases = [
      ['verify_tool_call', {}],
      ['verify_tool_call', { agent_id: 42, tool_name: 'search_db' }],
      ['verify_tool_call', { agent_id: p.agentId, tool_name: 'x'.repeat(257) }],
      ['verify_tool_call', { agent_id: p.agentId, tool_name: 'search_db', parameters: [1, 2] }],
      ['verify_tool_call', { agent_id: p.agentId, tool_name: 'search_db', parameters: { blob: 'x'.repeat(70 * 1024) } }],
      ['verify_tool_call', { agent_id: p.agentId, tool_name: 'search_db', parameters: nest(100) }],
      ['verify_tool_call', { agent_id: p.agentId, tool_name: 'search_db', extra: true }],
      ['verify_action', { agent_id: p.agentId, action: { type: 'calculate', query: '1', shell: 'rm' } }],
      ['verify_action', { agent_id: p.agentId, action: { type: 'calculate', query: 'x'.repeat(100_001) } }],
      ['verify_action', { agent_id: p.agentId, action: { type: 'calculate' }, context: { conversation_id: 'c', step_number: 0 } }],
      ['verify_action', { agent_id: p.agentId, action: { type: 'calculate', estimated_cost_usd: -1 } }],
      ['verify_action', { agent_id: p.agentId, action: 'calculate' }],
      ['get_approval', { approval_id: '' }],
      ['get_approval', { approval_id: null }],
      ['a2a_intercept', { sender_agent_id: 'a', receiver_agent_id: 'b', payload_type: 'wire_money', payload: {} }],
      ['a2a_intercept', { sender_agent_id: 'a', receiver_agent_id: 'b', payload_type: 'general', payload: { blob: 'x'.repeat(1024 * 1024) } }],
      ['a2a_intercept', { sender_agent_id: 'a', receiver_agent_id: 'b', payload_type: 'general', payload: {}, trace_id: 'has space' }],
      ['a2a_intercept', { sender_agent_id: 'a', receiver_agent_id: 'b', payload_type: 'general', payload: { items: new Array(150_000).fill(0) } }],
      ['no_such_tool', {}],
    ];
    const before = (await call(ctx.gate, 'GET', `/agents/${p.agentId}/activity`, { key: p.key })).body.summary.total_actions;
    for (const [name, args] of cases) {
      const r = await tool(name, args);
      const text = r.protocolError ? r.protocolError.message : r.content[0].text;
      assert.ok(r.protocolError || r.isError, `${name} ${JSON.stringify(args).slice(0, 200)} was accepted: ${text.slice(0, 200)}`);
      assert.ok(text.length < 4096, `${name}: an error of ${text.length} characters`);
      assert.doesNotMatch(text, /x{300}/, 'the error echoes the oversized input');
      // refused by the server's own schema, not sent to the gate
      assert.match(text, /Input validation error|more than the maximum of 100000 elements|Tool no_such_tool not found/, `${name}: ${text.slice(0, 200)}`);
    }
    // random arguments from a fixed seed: every answer is an error or a gate's answer, never a crash
    const r = rng(20261126);
    const names = ['verify_action', 'verify_tool_call', 'get_approval', 'a2a_intercept'];
    for (let i = 0; i < 150; i++) {
      const name = names[i % names.length];
      const res = await tool(name, randomValue(r));
      assert.ok(res.protocolError || res.isError || res.structuredContent, `${name}: ${JSON.stringify(res).slice(0, 300)}`);
    }
    // nothing malformed reached the gate's log as an action
    const afterwards = (await call(ctx.gate, 'GET', `/agents/${p.agentId}/activity`, { key: p.key })).body.summary.total_actions;
    assert.equal(afterwards, before);
    // still serving
    const ok = await tool('verify_tool_call', { agent_id: p.agentId, tool_name: 'search_db', parameters: { q: 'after the fuzz' } });
    assert.equal(ok.structuredContent.decision, 'APPROVED');
  });

  test('no answer and no log line carries the server\'s credentials', () => {
    const all = seen.join('\n') + mcp.stderr();
    assert.ok(seen.length > 150);
    assert.ok(!all.includes(p.key), 'the API key was echoed');
    assert.ok(!all.includes(p.token), 'the agent token was echoed');
  });
});

test('agentgate-mcp without a credential or with a bad AGENTGATE_URL refuses to start, naming the variable', () => {
  const r = spawnSync(process.execPath, [bin], { cwd: pkgDir, env: { PATH: process.env.PATH, HOME: process.env.HOME }, encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /set AGENTGATE_API_KEY or AGENTGATE_AGENT_TOKEN/);
  for (const url of ['ftp://gate.example', 'not a url', 'https://admin:s3cret-pass@gate.example']) {
    const u = spawnSync(process.execPath, [bin], { cwd: pkgDir, env: { PATH: process.env.PATH, AGENTGATE_URL: url, AGENTGATE_API_KEY: 'k' }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(u.status, 2, url);
    assert.match(u.stderr, /AGENTGATE_URL must be an http:\/\/ or https:\/\/ URL/);
    assert.doesNotMatch(u.stderr, /s3cret-pass/);
  }
  const h = spawnSync(process.execPath, [bin, '--help'], { cwd: pkgDir, env: { PATH: process.env.PATH, HOME: process.env.HOME }, encoding: 'utf8', timeout: 30_000 });
  assert.equal(h.status, 0);
  assert.match(h.stdout, /AGENTGATE_URL/);
});
