// Every request the client sends is one the gate's OpenAPI document describes: an operation of its
// method and path, query parameters and headers it declares, a body whose members its schema names
// (all the required ones), a credential of one of its security schemes; and every operation of the
// document is reached by some method. Each method is called once with every option it takes,
// against a real gate (the answers do not matter here: a 404 for an id that does not exist is a
// request described all the same).
import { before, after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGate, repoRoot } from './gate.mjs';
import { QWEDClient } from '../dist/index.js';

const doc = JSON.parse(readFileSync(join(repoRoot, 'schemas', 'openapi.v1.json'), 'utf8'));

/** deref follows a local $ref of the document. */
function deref(x) {
  while (x && x.$ref) {
    x = x.$ref.slice(2).split('/').reduce((n, k) => n?.[decodeURIComponent(k).replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return x;
}

/** operation finds the document's operation of a method and a concrete path. */
function operation(method, path) {
  for (const [template, item] of Object.entries(doc.paths)) {
    const re = new RegExp('^' + template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+') + '$');
    if (re.test(path) && item[method.toLowerCase()]) return { template, op: item[method.toLowerCase()], item };
  }
  return undefined;
}

const standardHeaders = new Set(['accept', 'content-type', 'user-agent', 'authorization', 'x-api-key']);
// Proxy mode relays the A2A protocol, whose own header the gate passes to the agent.
const a2aHeaders = new Set(['a2a-version']);

let gate;
const sent = [];
let calls;

before(async () => {
  gate = await startGate(['--refusal-rate', '0']);
  const recording = (u, init) => {
    const url = new URL(u);
    sent.push({ method: init.method, path: url.pathname, query: [...url.searchParams.keys()], headers: init.headers, body: init.body === undefined ? undefined : JSON.parse(init.body) });
    return fetch(u, init);
  };
  const key = new QWEDClient({ baseUrl: gate.url, apiKey: gate.adminKey, maxRetries: 0, fetch: recording });
  const agent = new QWEDClient({ baseUrl: gate.url, agentToken: 'qwed_agent_none', maxRetries: 0, fetch: recording });
  const t = new Date('2026-01-01T00:00:00Z');
  const ctx = { conversation_id: 'c', step_number: 1, user_intent: 'u' };
  calls = [
    () => key.registerAgent({ name: 'n', type: 'supervised', principalId: 'p', description: 'd', framework: 'f', model: 'm', permissions: { allowed_engines: ['math'] }, budget: { max_daily_cost_usd: 1 }, trustLevel: 1, idempotencyKey: 'k1' }),
    () => key.getAgent('a'),
    () => key.getAgentBudget('a'),
    () => key.getAgentActivity('a', { limit: 1, from: t, to: t, afterSeq: 1 }),
    () => key.getAgentState('a', { atSeq: 1 }),
    () => key.getAgentState('a', { atTime: t }),
    () => key.exportComplianceReport('a', { format: 'json' }),
    () => key.exportComplianceReport('a', { format: 'csv', from: t, to: t }),
    () => agent.verifyAction({ agentId: 'a', action: { type: 'calculate', query: '1', estimated_cost_usd: 1, estimated_tokens: 1, target: 't', code: 'c', parameters: {} }, context: ctx, options: { require_attestation: true, risk_threshold: 'low' } }),
    () => agent.verifyToolCall({ agentId: 'a', toolName: 't', parameters: { x: 1 }, context: ctx, justification: 'j', estimatedCostUsd: 1, estimatedTokens: 1, options: { require_attestation: true } }),
    () => agent.logExecution({ agentId: 'a', actionId: 'x', success: true, costUsd: 1, tokens: 1, resultHash: 'h' }),
    () => agent.requestTrust({ agentId: 'a', toLevel: 2, fromLevel: 1, justification: 'j', request: 'r' }),
    () => key.setTrustLevel({ agentId: 'a', trustLevel: 2, reason: 'r' }),
    () => key.suspendAgent({ agentId: 'a', reason: 'r' }),
    () => key.resumeAgent({ agentId: 'a', reason: 'r' }),
    () => key.fileComplaint({ agentId: 'a', reason: 'r' }),
    () => agent.rotateToken({ agentId: 'a' }),
    () => key.revokeToken({ agentId: 'a' }),
    () => key.putTools({ principalId: 'p', tools: [{ name: 'x', risk_level: 'low' }] }),
    () => key.putPrincipalPermissions({ principalId: 'p', allowedPaths: ['/srv'], deniedPaths: ['**/x'], allowedHosts: ['h.example'], allowedSchemes: ['https'], allowedPorts: [443] }),
    () => key.issuePrincipalKey({ principalId: 'p' }),
    () => key.rotatePrincipalKey({ principalId: 'p', keyId: 'k' }),
    () => key.revokePrincipalKey({ principalId: 'p', keyId: 'k' }),
    () => key.listApprovals({ status: 'pending', limit: 1, after: 'x' }),
    () => key.getApproval('x'),
    () => key.approve({ approvalId: 'x', reason: 'r' }),
    () => key.deny({ approvalId: 'x', reason: 'r' }),
    () => key.verify({ type: 'math', query: '1=1', params: {}, options: { include_proof: true, include_attestation: true, timeout_ms: 5000 }, metadata: { trace_id: 't' }, protocolVersion: '1.0' }),
    () => key.verifyBatch({ items: [{ type: 'math', query: '1=1' }], options: { max_parallel: 1, fail_fast: true }, metadata: { request_id: 'r' } }),
    () => key.listEngines(),
    () => key.sendEvent({ specversion: '1.0', type: 'qwed.verify', source: 's', id: 'i', datacontenttype: 'application/json', data: { type: 'math', query: '1=1' } }),
    () => key.a2aIntercept({ sender_agent_id: 's', receiver_agent_id: 'r', payload_type: 'general', payload: {}, trace_id: 't', timestamp: t.toISOString() }),
    () => key.a2aTrust({ agent: 'x', principal: 'p' }),
    () => key.a2aUntrust({ agent: 'x', principal: 'p' }),
    () => key.a2aBlock({ agent: 'x', principal: 'p' }),
    () => key.a2aUnblock({ agent: 'x', principal: 'p' }),
    () => key.a2aBlockPair({ sender: 's', receiver: 'r', principal: 'p' }),
    () => key.a2aUnblockPair({ sender: 's', receiver: 'r', principal: 'p' }),
    () => key.getA2ABoundary({ principal: 'p', list: 'trusted_agents', limit: 1, after: 'x' }),
    () => key.getA2ABoundary({ principal: 'p', atSeq: 1, sender: 's' }),
    () => key.getA2ABoundary({ principal: 'p', atTime: t.toISOString() }),
    () => key.getA2AMetrics({ principal: 'p', limit: 1, after: 'x' }),
    () => key.getA2AMetrics({ principal: 'p', atSeq: 1, sender: 's' }),
    () => key.getA2AMetrics({ principal: 'p', atTime: t.toISOString() }),
    () => key.getA2AHealth(),
    () => agent.prepareExecute({ businessId: 'b', request: { amount_cents: 1 }, agentId: 'a' }),
    () => agent.execute({ businessId: 'b', request: { amount_cents: 1 }, agentId: 'a', confirmationToken: 'ct' }),
    () => key.createBusiness({ id: 'b', name: 'n', categories: ['c'], endpoint: 'http://127.0.0.1:1/x', currency: 'USD' }),
    () => key.listBusinesses({ limit: 1, after: 'x' }),
    () => key.getBusiness('b'),
    () => key.updateBusiness({ businessId: 'b', id: 'b', name: 'n', categories: ['c'], endpoint: 'http://127.0.0.1:1/x', currency: 'USD' }),
    () => key.deleteBusiness({ businessId: 'b' }),
    () => key.createPolicy({ consumer: 'p', policy: { id: 'x', type: 'spending', spending: { daily_cents: 1 } } }),
    () => key.listPolicies({ consumer: 'p' }),
    () => key.getPolicy('x', { consumer: 'p', atSeq: 1 }),
    () => key.updatePolicy({ policyId: 'x', consumer: 'p', policy: { id: 'x', type: 'spending', spending: { daily_cents: 2 } } }),
    () => key.deletePolicy({ policyId: 'x', consumer: 'p' }),
    () => key.listTransactions({ consumer: 'p', agent: 'a', business: 'b', category: 'c', status: 'completed', from: t, to: t, limit: 1, after: 'x' }),
    () => key.getTransactionSummary({ consumer: 'p', agent: 'a', business: 'b', category: 'c', status: 'completed', from: t, to: t, period: 'day' }),
    () => key.getTransactionAnalytics({ consumer: 'p', agent: 'a', business: 'b', category: 'c', from: t, to: t, currency: 'USD', timeZone: 'UTC' }),
    () => key.getTransaction('x', { consumer: 'p', atSeq: 1 }),
    () => key.getTransaction('x', { consumer: 'p', atTime: t }),
    () => key.createWebhook({ url: 'https://example.com/h', events: ['blocked'], consumer: 'p' }),
    () => key.listWebhooks({ consumer: 'p' }),
    () => key.getWebhook('w', { consumer: 'p' }),
    () => key.updateWebhook({ webhookId: 'w', url: 'https://example.com/h', events: ['queued'], consumer: 'p' }),
    () => key.deleteWebhook({ webhookId: 'w', consumer: 'p' }),
    () => key.listWebhookDeliveries({ consumer: 'p', status: 'failed', kind: 'blocked', limit: 1, after: 'x' }),
    () => key.listWebhookDeliveries({ webhookId: 'w', consumer: 'p', status: 'failed', kind: 'blocked', limit: 1, after: 'x' }),
    () => key.health(),
    () => key.metrics(),
    () => key.jwks(),
    () => key.openapi(),
    () => key.getA2AAgentCard('treasury'),
    () => key.getA2AAgentCard('treasury', { legacy: true }),
    () => agent.a2aProxy({ name: 'treasury', request: { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} }, a2aVersion: '1.0' }),
  ];
  for (const c of calls) await c().catch(() => undefined);
});
after(async () => gate?.stop());

describe('the client\'s requests and the OpenAPI document', () => {
  it('sends only requests the document describes', () => {
    assert.equal(sent.length, calls.length);
    const problems = [];
    for (const r of sent) {
      const where = `${r.method} ${r.path}`;
      const found = operation(r.method, r.path);
      if (!found) {
        problems.push(`${where}: no operation`);
        continue;
      }
      const params = [...(found.item.parameters ?? []), ...(found.op.parameters ?? [])].map(deref);
      const query = new Set(params.filter((p) => p.in === 'query').map((p) => p.name));
      for (const q of r.query) if (!query.has(q)) problems.push(`${where}: query parameter ${q} is not declared`);
      const headers = new Set(params.filter((p) => p.in === 'header').map((p) => p.name.toLowerCase()));
      const proxy = found.template.startsWith('/a2a/proxy/');
      for (const h of Object.keys(r.headers)) if (!standardHeaders.has(h) && !headers.has(h) && !(proxy && a2aHeaders.has(h))) problems.push(`${where}: header ${h} is not declared`);
      const security = found.op.security ?? doc.security ?? [];
      if (security.length > 0) {
        const cred = r.headers['x-api-key'] ? 'ApiKey' : r.headers.authorization ? 'AgentToken' : undefined;
        if (!security.some((s) => Object.keys(s).length === 0 || (cred && cred in s))) problems.push(`${where}: credential ${cred} is not one of ${JSON.stringify(security)}`);
      }
      const content = found.op.requestBody ? deref(found.op.requestBody).content ?? {} : {};
      if (r.body !== undefined) {
        const media = Object.keys(content);
        const ctype = r.headers['content-type'];
        if (!media.includes(ctype)) {
          problems.push(`${where}: a body of ${ctype}, the document takes ${media.join(', ') || 'none'}`);
          continue;
        }
        const schema = deref(content[ctype].schema);
        const members = Object.keys(r.body);
        if (schema?.properties && schema.additionalProperties === false) {
          for (const m of members) if (!(m in schema.properties)) problems.push(`${where}: body member ${m} is not in the schema`);
        }
        for (const m of schema?.required ?? []) if (!members.includes(m)) problems.push(`${where}: required body member ${m} is missing`);
      } else if (found.op.requestBody && deref(found.op.requestBody).required) {
        problems.push(`${where}: the document requires a body`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('can send every query parameter the document declares', () => {
    const sentQueries = new Map();
    for (const r of sent) {
      const f = operation(r.method, r.path);
      if (!f) continue;
      const k = `${r.method} ${f.template}`;
      sentQueries.set(k, new Set([...(sentQueries.get(k) ?? []), ...r.query]));
    }
    // GET /webhooks/deliveries?webhook_id= is GET /webhooks/{id}/deliveries, which listWebhookDeliveries calls for a webhookId.
    const elsewhere = new Set(['GET /webhooks/deliveries webhook_id']);
    const missing = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const m of ['get', 'put', 'post', 'delete', 'patch']) {
        const op = item[m];
        if (!op) continue;
        const k = `${m.toUpperCase()} ${template}`;
        for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])].map(deref)) {
          if (p.in === 'query' && !sentQueries.get(k)?.has(p.name) && !elsewhere.has(`${k} ${p.name}`)) missing.push(`${k} ?${p.name}`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });

  it('reaches every operation of the document', () => {
    const reached = new Set(sent.map((r) => { const f = operation(r.method, r.path); return f && `${r.method} ${f.template}`; }));
    const all = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const m of ['get', 'put', 'post', 'delete', 'patch']) if (item[m]) all.push(`${m.toUpperCase()} ${template}`);
    }
    assert.deepEqual(all.filter((o) => !reached.has(o)), []);
  });
});
