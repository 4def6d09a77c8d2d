// Every endpoint of the HTTP API has a client method (checked against the gate's routes), and every
// method not exercised by the agent tests runs here against a real gate and a real business.
import { before, after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startGate, startDevBusiness, repoRoot } from './gate.mjs';
import { QWEDClient, QWEDAgentClient, AuthenticationError, ValidationError, NotFoundError, AttestationError, verifyAttestation } from '../dist/index.js';

/** The client method of each route of handlers/httpapi. */
const routes = {
  'POST /agents/register': 'registerAgent',
  'GET /agents/{id}': 'getAgent',
  'GET /agents/{id}/budget': 'getAgentBudget',
  'GET /agents/{id}/activity': 'getAgentActivity',
  'GET /agents/{id}/state': 'getAgentState',
  'GET /agents/{id}/compliance-report': 'exportComplianceReport',
  'POST /agents/{id}/verify': 'verifyAction',
  'POST /agents/{id}/tools/{tool}': 'verifyToolCall',
  'POST /agents/{id}/executions': 'logExecution',
  'POST /agents/{id}/trust': 'requestTrust',
  'POST /agents/{id}/trust-level': 'setTrustLevel',
  'POST /agents/{id}/suspend': 'suspendAgent',
  'POST /agents/{id}/complaints': 'fileComplaint',
  'PUT /principals/{id}/tools': 'putTools',
  'PUT /principals/{id}/permissions': 'putPrincipalPermissions',
  'POST /principals/{id}/keys': 'issuePrincipalKey',
  'POST /principals/{id}/keys/{key_id}/rotate': 'rotatePrincipalKey',
  'DELETE /principals/{id}/keys/{key_id}': 'revokePrincipalKey',
  'POST /agents/{id}/token/rotate': 'rotateToken',
  'DELETE /agents/{id}/token': 'revokeToken',
  'GET /approvals': 'listApprovals',
  'GET /approvals/{id}': 'getApproval',
  'POST /approvals/{id}/approve': 'approve',
  'POST /approvals/{id}/deny': 'deny',
  'POST /events': 'sendEvent',
  'POST /verify': 'verify',
  'GET /engines': 'listEngines',
  'GET /.well-known/jwks.json': 'jwks',
  'GET /openapi.json': 'openapi',
  'GET /healthz': 'health',
  'GET /metrics': 'metrics',
  'GET /a2a/boundary': 'getA2ABoundary',
  'GET /a2a/metrics': 'getA2AMetrics',
  'GET /a2a/health': 'getA2AHealth',
  'POST /a2a/intercept': 'a2aIntercept',
  'POST /a2a/boundary/trust/{agent}': 'a2aTrust',
  'DELETE /a2a/boundary/trust/{agent}': 'a2aUntrust',
  'POST /a2a/boundary/block/{agent}': 'a2aBlock',
  'DELETE /a2a/boundary/block/{agent}': 'a2aUnblock',
  'POST /a2a/boundary/block-pair': 'a2aBlockPair',
  'DELETE /a2a/boundary/block-pair': 'a2aUnblockPair',
  'GET /transactions': 'listTransactions',
  'GET /transactions/summary': 'getTransactionSummary',
  'GET /transactions/analytics': 'getTransactionAnalytics',
  'GET /transactions/{id}': 'getTransaction',
  'POST /webhooks': 'createWebhook',
  'GET /webhooks': 'listWebhooks',
  'GET /webhooks/deliveries': 'listWebhookDeliveries',
  'GET /webhooks/{id}': 'getWebhook',
  'PUT /webhooks/{id}': 'updateWebhook',
  'DELETE /webhooks/{id}': 'deleteWebhook',
  'GET /webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'POST /agp/execute/prepare': 'prepareExecute',
  'POST /agp/execute': 'execute',
  'POST /businesses': 'createBusiness',
  'GET /businesses': 'listBusinesses',
  'GET /businesses/{id}': 'getBusiness',
  'PUT /businesses/{id}': 'updateBusiness',
  'DELETE /businesses/{id}': 'deleteBusiness',
  'POST /policies': 'createPolicy',
  'GET /policies': 'listPolicies',
  'GET /policies/{id}': 'getPolicy',
  'PUT /policies/{id}': 'updatePolicy',
  'DELETE /policies/{id}': 'deletePolicy',
};

describe('the client covers the HTTP API', () => {
  it('has a method for every route the gate registers, and no route it does not', () => {
    const dir = join(repoRoot, 'handlers', 'httpapi');
    const found = new Set();
    for (const f of readdirSync(dir).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'))) {
      for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/a\.handle\("([A-Z]+ [^"]+)"/g)) found.add(m[1]);
    }
    assert.ok(found.size > 40, `only ${found.size} routes found`);
    const missing = [...found].filter((r) => !(r in routes));
    assert.deepEqual(missing, [], 'routes without a client method: add one (and a row to README.md)');
    const stale = Object.keys(routes).filter((r) => !found.has(r));
    assert.deepEqual(stale, [], 'client routes the gate no longer has');
    for (const m of new Set(Object.values(routes))) assert.equal(typeof QWEDClient.prototype[m], 'function', m);
  });
});

let gate;
let business;
let businessUrl;
let admin;
let key;
let client;

before(async () => {
  // A local business for the execute path (agentgate dev-business on a free port).
  business = await startDevBusiness();
  businessUrl = business.url;
  gate = await startGate(['--refusal-rate', '0', '--execute-policy', 'confirm']);
  admin = new QWEDClient({ apiKey: gate.adminKey, baseUrl: gate.url });
  key = (await admin.issuePrincipalKey({ principalId: 'org_api' })).api_key;
  client = new QWEDClient({ apiKey: key, baseUrl: gate.url });
});
after(async () => {
  await gate?.stop();
  await business?.stop();
});

describe('principals', () => {
  it('issues, rotates and revokes a principal\'s keys, and puts its tool registry', async () => {
    const k = await admin.issuePrincipalKey({ principalId: 'org_keys' });
    assert.match(k.api_key, /^qwed_key_/);
    const owner = new QWEDClient({ apiKey: k.api_key, baseUrl: gate.url });
    const tools = await owner.putTools({ principalId: 'org_keys', tools: [{ name: 'fetch_report', risk_level: 'low' }] });
    assert.deepEqual(tools.tools.map((t) => t.name), ['fetch_report']);
    const perms = await owner.putPrincipalPermissions({ principalId: 'org_keys', allowedPaths: ['/srv'], allowedHosts: ['Bücher.example'] });
    assert.deepEqual(perms.allowed_hosts, ['xn--bcher-kva.example']);
    assert.deepEqual(perms.allowed_paths, ['/srv']);
    const r = await admin.rotatePrincipalKey({ principalId: 'org_keys', keyId: k.key_id });
    assert.equal(r.replaces, k.key_id);
    await assert.rejects(owner.listApprovals(), (e) => e instanceof AuthenticationError && e.code === 'QWED-AUTH-002');
    const rotated = new QWEDClient({ apiKey: r.api_key, baseUrl: gate.url });
    assert.ok(Array.isArray((await rotated.listApprovals()).approvals));
    const gone = await rotated.revokePrincipalKey({ principalId: 'org_keys', keyId: r.key_id });
    assert.equal(gone.revoked, true);
    await assert.rejects(rotated.listApprovals(), AuthenticationError);
    await assert.rejects(new QWEDClient({ baseUrl: gate.url }).registerAgent({ name: 'x', type: 'supervised', principalId: 'org_keys' }), (e) => e instanceof AuthenticationError && e.code === 'QWED-AUTH-001');
  });
});

describe('QWED protocol v1.0', () => {
  it('verifies one request and a batch, and lists the engines', async () => {
    const one = await client.verify({ type: 'math', query: '2+2=4' });
    assert.equal(one.status, 'VERIFIED');
    const corrected = await client.verify({ engine: 'math', query: '2+2=5', protocolVersion: '1.0' });
    assert.equal(corrected.status, 'CORRECTED');
    const batch = await client.verifyBatch({ items: [{ type: 'math', query: '1+1=2' }, { type: 'math', query: '1+1=3' }] });
    assert.deepEqual(batch.items.map((i) => i.status), ['VERIFIED', 'CORRECTED']);
    await assert.rejects(client.verify({ type: 'math' }), (e) => e instanceof ValidationError && e.code === 'QWED-REQ-002');
    // An outcome other than ERROR is a result, whatever its HTTP status (BLOCKED is 403).
    const blocked = await client.verify({ type: 'code', query: 'import os\nos.system("rm -rf /")' });
    assert.equal(blocked.status, 'BLOCKED');
    assert.equal(blocked.verified, false);
    const engines = await client.listEngines();
    assert.ok(engines.engines.some((e) => e.engine_id === 'math'));
  });

  it('sends a command as a structured CloudEvent and reads the reply', async () => {
    const reply = await client.sendEvent({ specversion: '1.0', type: 'qwed.verify', source: 'sdk-ts-test', id: 'evt-1', datacontenttype: 'application/json', data: { type: 'math', query: '3+3=6' } });
    assert.equal(reply.type, 'qwed.verify.reply');
    assert.equal(reply.data.status, 'VERIFIED');
  });

  it('reads the operational endpoints', async () => {
    assert.equal((await client.health()).status, 'ok');
    assert.match(await client.metrics(), /# TYPE agentgate_/);
    const jwks = await client.jwks();
    assert.ok(jwks.keys.length >= 1);
    const doc = await client.openapi();
    assert.match(doc.openapi, /^3\.1/);
    assert.ok(doc.paths['/agents/{id}/verify']);
  });
});

describe('QWED A2A', () => {
  it('changes and reads the trust boundary, and intercepts messages', async () => {
    assert.equal((await client.a2aTrust({ agent: 'procurement-agent' })).op, 'trust');
    await client.a2aTrust({ agent: 'treasury-agent' });
    const items = [{ description: 'Widget A', amount: 50.0, quantity: 2 }, { description: 'Widget B', amount: 25.0, quantity: 2 }];
    const msg = (total) => ({ sender_agent_id: 'procurement-agent', receiver_agent_id: 'treasury-agent', payload_type: 'financial_transaction', payload: { data: { claimed_total: total, line_items: items } } });
    const ok = await client.a2aIntercept(msg(150.0));
    assert.equal(ok.status, 'forwarded');
    assert.equal(ok.engine_used, 'finance_guard');
    assert.equal((await client.verifyAttestation(ok.attestation_jwt, { kind: 'a2a' })).qwed_a2a.verdict, 'forwarded');
    // A blocked verdict is a result (HTTP 403), not an exception.
    const bad = await client.a2aIntercept(msg(999.99));
    assert.equal(bad.status, 'blocked');
    assert.match(bad.reason, /hallucination/);

    assert.equal((await client.a2aBlockPair({ sender: 'procurement-agent', receiver: 'treasury-agent' })).op, 'block_pair');
    assert.equal((await client.a2aIntercept(msg(150.0))).status, 'blocked');
    await client.a2aUnblockPair({ sender: 'procurement-agent', receiver: 'treasury-agent' });
    await client.a2aBlock({ agent: 'procurement-agent' });
    let boundary = await client.getA2ABoundary({ list: 'blocked_agents' });
    assert.equal(boundary.blocked_agents.count, 1);
    await client.a2aUnblock({ agent: 'procurement-agent' });
    await client.a2aUntrust({ agent: 'treasury-agent' });
    boundary = await client.getA2ABoundary();
    assert.equal(boundary.trusted_agents.count, 1);
    assert.equal(boundary.blocked_agents.count, 0);
    const m = await client.getA2AMetrics();
    assert.equal(m.forwarded, 1);
    assert.equal(m.blocked, 2);
    assert.equal((await client.getA2AHealth()).status, 'ok');
  });
});

describe('the Agent Policy Engine', () => {
  it('registers a business, sets policies, prepares and executes, and reads the transactions', async () => {
    const biz = await client.createBusiness({ id: 'coffee', name: 'Coffee Shop', categories: ['food'], endpoint: `${businessUrl}/orders`, currency: 'USD' });
    assert.equal(biz.id, 'coffee');
    assert.equal((await client.updateBusiness({ businessId: 'coffee', id: 'coffee', name: 'Coffee Bar', categories: ['food'], endpoint: `${businessUrl}/orders`, currency: 'USD' })).name, 'Coffee Bar');
    assert.equal((await client.getBusiness('coffee')).name, 'Coffee Bar');
    assert.ok((await client.listBusinesses()).businesses.some((b) => b.id === 'coffee'));

    const created = await client.createPolicy({ policy: { id: 'daily-10', type: 'spending', spending: { daily_cents: 1000 } } });
    assert.equal(created.policy.version, 1);
    const updated = await client.updatePolicy({ policyId: 'daily-10', policy: { id: 'daily-10', type: 'spending', spending: { daily_cents: 800 } } });
    assert.equal(updated.policy.version, 2);
    assert.equal((await client.getPolicy('daily-10', { atSeq: created.seq })).policy.spending.daily_cents, 1000);
    assert.equal((await client.listPolicies()).policies.length, 1);

    const shopper = await QWEDAgentClient.register({ baseUrl: gate.url, apiKey: key, name: 'Shopper', type: 'autonomous', principalId: 'org_api' });
    const order = { businessId: 'coffee', request: { item: 'latte', amount_cents: 450 }, agentId: shopper.agentId };
    // The confirm policy: no token, a refusal (403) with the gate's code.
    await assert.rejects(shopper.execute(order), (e) => e.status === 403 && /^QWED-EXEC-/.test(e.code));
    const prep = await shopper.prepareExecute(order);
    assert.match(prep.confirmationToken, /^qwed_ct_/);
    const done = await shopper.execute({ ...order, confirmationToken: prep.confirmationToken });
    assert.equal(done.status, 'completed');
    assert.equal(done.data.received.item, 'latte');
    // Over the policy: $4.50 spent, $4 more passes $8.
    const more = { ...order, request: { item: 'beans', amount_cents: 400 } };
    const ct = (await shopper.prepareExecute(more)).confirmationToken;
    await assert.rejects(shopper.execute({ ...more, confirmationToken: ct }), (e) => e.status === 403);

    const tx = await client.getTransaction(done.transactionId);
    assert.equal(tx.status, 'completed');
    assert.ok((await client.listTransactions({ status: 'completed' })).transactions.some((t) => t.transaction_id === done.transactionId));
    assert.equal((await client.getTransactionSummary()).totals.by_status.completed, 1);
    assert.ok(Array.isArray((await client.getTransactionAnalytics()).daily));

    assert.equal((await client.deletePolicy({ policyId: 'daily-10' })).op, 'delete');
    assert.equal((await client.deleteBusiness({ businessId: 'coffee' })).deleted, true);
    await assert.rejects(client.getBusiness('coffee'), NotFoundError);
  });

  it('lets a business check the gate\'s execute decision offline (X-Agentgate-Decision)', async () => {
    // A business written with the SDK: it verifies the signed decision the gate sends with each call.
    const jwks = await client.jwks();
    const seen = [];
    const server = createServer(async (req, res) => {
      for await (const _ of req);
      let verdict;
      try {
        verdict = await verifyAttestation(req.headers['x-agentgate-decision'], jwks, { kind: 'execute' });
      } catch (e) {
        verdict = { error: e.code };
      }
      seen.push(verdict);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'completed', data: { checked: !verdict.error } }));
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    try {
      await client.createBusiness({ id: 'tea', name: 'Tea House', categories: ['food'], endpoint: `http://127.0.0.1:${server.address().port}/orders`, currency: 'USD' });
      const shopper = await QWEDAgentClient.register({ baseUrl: gate.url, apiKey: key, name: 'TeaShopper', type: 'autonomous', principalId: 'org_api' });
      const order = { businessId: 'tea', request: { item: 'sencha', amount_cents: 300 }, agentId: shopper.agentId };
      const prep = await shopper.prepareExecute(order);
      const done = await shopper.execute({ ...order, confirmationToken: prep.confirmationToken });
      assert.equal(done.status, 'completed');
      assert.equal(done.data.checked, true);
      assert.equal(seen.length, 1);
      assert.equal(seen[0].sub, done.transactionId);
      assert.equal(seen[0].aud, 'tea');
      await assert.rejects(verifyAttestation(prep.confirmationToken, jwks, { kind: 'execute' }), AttestationError);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('creates, updates, lists and deletes webhooks, and reads deliveries', async () => {
    const wh = await client.createWebhook({ url: 'https://example.com/hooks/agentgate', events: ['blocked'] });
    assert.match(wh.id, /^wh_/);
    const up = await client.updateWebhook({ webhookId: wh.id, url: 'https://example.com/hooks/v2', events: ['blocked', 'queued'] });
    assert.deepEqual(up.events, ['blocked', 'queued']);
    assert.equal((await client.getWebhook(wh.id)).url, 'https://example.com/hooks/v2');
    assert.equal((await client.listWebhooks()).webhooks.length, 1);
    assert.ok(Array.isArray((await client.listWebhookDeliveries()).deliveries));
    assert.ok(Array.isArray((await client.listWebhookDeliveries({ webhookId: wh.id, limit: 10 })).deliveries));
    await client.deleteWebhook({ webhookId: wh.id });
    assert.equal((await client.listWebhooks()).webhooks.length, 0);
  });
});
