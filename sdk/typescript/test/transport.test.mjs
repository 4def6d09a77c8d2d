// The transport against a real gate, through a real proxy that can lose answers, answer 503 or hold
// requests: one Idempotency-Key per call reused on its retries, Retry-After, backoff limits, timeouts,
// aborts, typed errors, the address rule, and credentials kept out of every rendering.
import { before, after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { startGate, refusingPort } from './gate.mjs';
import { startProxy } from './proxy.mjs';
import {
  QWEDClient, QWEDAgentClient, QWEDError, APIConnectionError, APITimeoutError, APIUserAbortError, AuthenticationError, ConflictError,
  RateLimitError, ServerError, ValidationError, DEFAULT_BASE_URL,
} from '../dist/index.js';

let gate;
let proxy;
let admin;
let key;
let agentId;
let token;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

before(async () => {
  // POST /verify limited to 1/s, burst 2, per principal: the real gate's 429 with Retry-After.
  gate = await startGate(['--refusal-rate', '0', '--verify-rate', '1', '--verify-burst', '2']);
  proxy = await startProxy(gate.url);
  admin = new QWEDClient({ apiKey: gate.adminKey, baseUrl: gate.url });
  key = (await admin.issuePrincipalKey({ principalId: 'org_transport' })).api_key;
  const reg = await new QWEDClient({ apiKey: key, baseUrl: gate.url }).registerAgent({ name: 'T', type: 'supervised', principalId: 'org_transport', permissions: { allowed_engines: ['math'] } });
  agentId = reg.agent_id;
  token = reg.agent_token;
});
after(async () => {
  await proxy?.stop();
  await gate?.stop();
});

const action = (q) => ({ type: 'calculate', query: q });
const ctx = (conv, step) => ({ conversation_id: conv, step_number: step });

describe('retries and idempotency', () => {
  it('retries a lost answer with the same Idempotency-Key: the gate decides once and replays its answer', async () => {
    proxy.reset();
    proxy.next({ kind: 'drop' });
    const c = new QWEDClient({ baseUrl: proxy.url, agentToken: token });
    const d = await c.verifyAction({ agentId, action: action('2+2'), context: ctx('conv_lost', 1) });
    assert.equal(d.decision, 'APPROVED');
    assert.equal(proxy.seen.length, 2);
    assert.match(proxy.seen[0].idempotencyKey, uuid);
    assert.equal(proxy.seen[1].idempotencyKey, proxy.seen[0].idempotencyKey);
    // Decided once: one activity entry for the conversation, the answer's action.
    const act = await admin.getAgentActivity(agentId);
    const mine = act.activities.filter((a) => a.conversation_id === 'conv_lost');
    assert.equal(mine.length, 1, JSON.stringify(act.activities));
    assert.equal(mine[0].activity_id, d.action_id);
    // Without the SDK's retry the same step would be a replay: the key made it the same request.
    const again = await c.verifyAction({ agentId, action: action('2+2'), context: ctx('conv_lost', 1) });
    assert.equal(again.decision, 'DENIED');
    assert.equal(again.error.code, 'QWED-AGENT-LOOP-002');
  });

  it('registers an agent whose answer was lost: the replay has no token, so the key rotates one in', async () => {
    proxy.reset();
    proxy.next({ kind: 'drop' });
    const agent = await QWEDAgentClient.register({ baseUrl: proxy.url, apiKey: key, name: 'LostAnswer', principalId: 'org_transport', permissions: { allowed_engines: ['math'] } });
    assert.deepEqual(proxy.seen.map((x) => `${x.method} ${x.path}`), ['POST /agents/register', 'POST /agents/register', `POST /agents/${agent.agentId}/token/rotate`]);
    assert.equal(proxy.seen[1].idempotencyKey, proxy.seen[0].idempotencyKey);
    assert.equal((await agent.verifyAction({ type: 'calculate', query: '1+1' })).decision, 'APPROVED');
  });

  it('gives each call its own key, takes the caller\'s, and surfaces a key reused for another request', async () => {
    proxy.reset();
    const c = new QWEDClient({ baseUrl: proxy.url, agentToken: token });
    await c.verifyAction({ agentId, action: action('1+1'), context: ctx('conv_keys', 1) });
    await c.verifyAction({ agentId, action: action('1+2'), context: ctx('conv_keys', 2) });
    assert.notEqual(proxy.seen[0].idempotencyKey, proxy.seen[1].idempotencyKey);
    const first = await c.verifyAction({ agentId, action: action('1+3'), context: ctx('conv_keys', 3), idempotencyKey: 'my-key-1' });
    assert.equal(proxy.seen[2].idempotencyKey, 'my-key-1');
    const replayed = await c.verifyAction({ agentId, action: action('1+3'), context: ctx('conv_keys', 3), idempotencyKey: 'my-key-1' });
    assert.deepEqual(replayed, first);
    await assert.rejects(
      c.verifyAction({ agentId, action: action('9+9'), context: ctx('conv_keys', 4), idempotencyKey: 'my-key-1' }),
      (e) => e instanceof ConflictError && e.code === 'QWED-REQ-409' && e.status === 409 && e.requestId === 'my-key-1',
    );
    // A GET carries no key.
    await c.getAgent(agentId);
    assert.equal(proxy.seen.at(-1).method, 'GET');
    assert.equal(proxy.seen.at(-1).idempotencyKey, undefined);
  });

  it('honours Retry-After on a 503 and retries with the same key', async () => {
    proxy.reset();
    proxy.next({ kind: 'answer', status: 503, headers: { 'retry-after': '1' }, body: { error: { code: 'QWED-SYS-002', message: 'unavailable', details: {} } } });
    const c = new QWEDClient({ baseUrl: proxy.url, agentToken: token });
    const t0 = performance.now();
    const d = await c.verifyAction({ agentId, action: action('4+4'), context: ctx('conv_ra', 1) });
    const waited = performance.now() - t0;
    assert.equal(d.decision, 'APPROVED');
    assert.equal(proxy.seen.length, 2);
    assert.equal(proxy.seen[1].idempotencyKey, proxy.seen[0].idempotencyKey);
    assert.ok(waited >= 990, `waited ${waited} ms, Retry-After said 1 s`);
  });

  it('throws at once when Retry-After is longer than it waits', async () => {
    proxy.reset();
    proxy.next({ kind: 'answer', status: 503, headers: { 'retry-after': '120' }, body: { error: { code: 'QWED-SYS-002', message: 'come back later', details: {} } } });
    const c = new QWEDClient({ baseUrl: proxy.url, agentToken: token });
    await assert.rejects(c.getAgent(agentId), (e) => e instanceof ServerError && e.code === 'QWED-SYS-002' && e.status === 503);
    assert.equal(proxy.seen.length, 1);
  });

  it('gives up after maxRetries, every attempt with the same key, and does not retry a 400', async () => {
    proxy.reset();
    const busy = { kind: 'answer', status: 502, body: { error: { code: 'QWED-SYS-002', message: 'bad gateway', details: {} } } };
    proxy.next(busy, busy, busy);
    const c = new QWEDClient({ baseUrl: proxy.url, agentToken: token, maxRetries: 2 });
    await assert.rejects(c.verifyAction({ agentId, action: action('5+5'), context: ctx('conv_502', 1) }), (e) => e instanceof ServerError && e.status === 502 && e.requestId === proxy.seen[0].idempotencyKey);
    assert.equal(proxy.seen.length, 3);
    assert.equal(new Set(proxy.seen.map((s) => s.idempotencyKey)).size, 1);

    proxy.reset();
    await assert.rejects(c.verifyAction({ agentId, action: action('5+5'), context: {} }), ValidationError);
    assert.equal(proxy.seen.length, 1);
  });

  it('answers the gate\'s own rate limit (429, Retry-After) with RateLimitError, or waits and retries', async () => {
    const k = (await admin.issuePrincipalKey({ principalId: 'org_ratelimited' })).api_key;
    const once = new QWEDClient({ baseUrl: gate.url, apiKey: k, maxRetries: 0 });
    let err;
    for (let i = 0; i < 10 && !err; i++) {
      await once.verify({ type: 'math', query: '2+2=4' }).catch((e) => (err = e));
    }
    assert.ok(err instanceof RateLimitError, String(err));
    assert.equal(err.code, 'QWED-AUTH-004');
    assert.equal(err.status, 429);
    assert.ok(err.retryAfter >= 1, `retryAfter ${err.retryAfter}`);
    const patient = new QWEDClient({ baseUrl: gate.url, apiKey: k, maxRetries: 3 });
    const r = await patient.verify({ type: 'math', query: '2+2=4' });
    assert.equal(r.status, 'VERIFIED');
  });
});

describe('timeouts and aborts', () => {
  it('times out an attempt after timeoutMs, and retries it with the same key', async () => {
    proxy.reset();
    proxy.next({ kind: 'hold' }, { kind: 'hold' });
    const c = new QWEDClient({ baseUrl: proxy.url, agentToken: token, timeoutMs: 200, maxRetries: 1 });
    await assert.rejects(c.verifyAction({ agentId, action: action('6+6'), context: ctx('conv_to', 1) }), (e) => e instanceof APITimeoutError && e instanceof APIConnectionError && e.code === 'QWED-SDK-TIMEOUT' && e.status === 0);
    assert.equal(proxy.seen.length, 2);
    assert.equal(proxy.seen[1].idempotencyKey, proxy.seen[0].idempotencyKey);
  });

  it('stops at once when the caller aborts, without retrying', async () => {
    proxy.reset();
    proxy.next({ kind: 'hold' });
    const c = new QWEDClient({ baseUrl: proxy.url, agentToken: token, timeoutMs: 60_000, maxRetries: 2 });
    const ctl = new AbortController();
    const p = c.verifyAction({ agentId, action: action('7+7'), context: ctx('conv_abort', 1), signal: ctl.signal });
    while (proxy.seen.length === 0) await new Promise((r) => setImmediate(r));
    ctl.abort();
    await assert.rejects(p, (e) => e instanceof APIUserAbortError && e.code === 'QWED-SDK-ABORTED');
    assert.equal(proxy.seen.length, 1);
    await assert.rejects(c.getAgent(agentId, { signal: AbortSignal.abort() }), APIUserAbortError);
  });

  it('retries a refused connection, then throws APIConnectionError', async () => {
    const refusing = await refusingPort();
    try {
      let sent = 0;
      const c = new QWEDClient({ baseUrl: `http://127.0.0.1:${refusing.port}`, apiKey: 'qwed_key_refused_secret', maxRetries: 1, fetch: (u, i) => { sent++; return fetch(u, i); } });
      await assert.rejects(c.health(), (e) => e instanceof APIConnectionError && !(e instanceof APITimeoutError) && e.code === 'QWED-SDK-CONNECTION');
      assert.equal(sent, 2);
    } finally {
      refusing.close();
    }
  });
});

describe('credentials and address', () => {
  it('sends one credential: the agent token on agent calls, the API key elsewhere', async () => {
    proxy.reset();
    const c = new QWEDClient({ baseUrl: proxy.url, apiKey: key, agentToken: token });
    await c.verifyAction({ agentId, action: action('8+8'), context: ctx('conv_cred', 1) });
    await c.getAgent(agentId);
    const [v, g] = proxy.seen;
    assert.equal(v.headers.authorization, `Bearer ${token}`);
    assert.equal(v.headers['x-api-key'], undefined);
    assert.equal(g.headers['x-api-key'], key);
    assert.equal(g.headers.authorization, undefined);
    assert.match(v.headers['user-agent'], /^agentgate-sdk-typescript\/\d+\.\d+\.\d+$/);
  });

  it('never shows the API key or the agent token: inspect, JSON, error messages, fields and stacks', async () => {
    const secretKey = 'qwed_key_THIS_IS_SECRET_abc123';
    const secretToken = 'qwed_agent_THIS_IS_SECRET_def456';
    const c = new QWEDClient({ baseUrl: gate.url, apiKey: secretKey, agentToken: secretToken });
    const renderings = [inspect(c, { showHidden: true, depth: 10 }), JSON.stringify(c), String(Object.values(c)), inspect(Object.getOwnPropertyDescriptors(c), { depth: 5 })];
    const errs = [];
    errs.push(await c.getAgent(agentId).catch((e) => e)); // unknown key: 401
    errs.push(await c.verifyAction({ agentId, action: action('1'), context: ctx('c', 1) }).catch((e) => e)); // wrong token: 401
    const refusing = await refusingPort();
    errs.push(await new QWEDClient({ baseUrl: `http://127.0.0.1:${refusing.port}`, apiKey: secretKey, agentToken: secretToken, maxRetries: 0 }).health().catch((e) => e));
    refusing.close();
    proxy.reset();
    proxy.next({ kind: 'hold' });
    errs.push(await new QWEDClient({ baseUrl: proxy.url, apiKey: secretKey, timeoutMs: 100, maxRetries: 0 }).getAgent(agentId).catch((e) => e));
    assert.ok(errs[0] instanceof AuthenticationError && errs[0].code === 'QWED-AUTH-002');
    assert.ok(errs[1] instanceof AuthenticationError && errs[1].code === 'QWED-AGENT-002');
    assert.ok(errs[2] instanceof APIConnectionError);
    assert.ok(errs[3] instanceof APITimeoutError);
    for (const e of errs) {
      assert.ok(e instanceof QWEDError);
      renderings.push(e.message, e.stack, inspect(e, { showHidden: true, depth: 10 }), JSON.stringify(e), JSON.stringify(e.details), String(e));
    }
    for (const r of renderings) {
      assert.ok(!r.includes('THIS_IS_SECRET'), `a secret in: ${r}`);
    }
    assert.match(inspect(c), /apiKey: '\[redacted\]'/);
  });

  it('keeps the secrets a result returns out of its logged forms, readable by name', async () => {
    const reg = await new QWEDClient({ apiKey: key, baseUrl: gate.url }).registerAgent({ name: 'Quiet', type: 'supervised', principalId: 'org_transport' });
    assert.match(reg.agent_token, /^qwed_agent_/);
    const issued = await admin.issuePrincipalKey({ principalId: 'org_quiet' });
    assert.match(issued.api_key, /^qwed_key_/);
    for (const [r, secret] of [[reg, reg.agent_token], [issued, issued.api_key]]) {
      for (const text of [JSON.stringify(r), inspect(r, { depth: 5 }), String(Object.values(r))]) assert.ok(!text.includes(secret), text);
    }
    assert.equal(reg.agent_id.startsWith('agent_'), true);
  });

  it('takes the API key from AGENTGATE_API_KEY when none is given; an agent client never does', async () => {
    const saved = process.env.AGENTGATE_API_KEY;
    try {
      process.env.AGENTGATE_API_KEY = key;
      proxy.reset();
      const c = new QWEDClient({ baseUrl: proxy.url });
      assert.ok(Array.isArray((await c.listApprovals()).approvals));
      assert.equal(proxy.seen[0].headers['x-api-key'], key);
      const agent = new QWEDAgentClient({ baseUrl: proxy.url, agentId, agentToken: token });
      await agent.getAgent();
      assert.equal(proxy.seen[1].headers['x-api-key'], undefined);
      assert.equal(proxy.seen[1].headers.authorization, `Bearer ${token}`);
      assert.match(inspect(agent), /^QWEDAgentClient \{ baseUrl: '[^']+', apiKey: undefined, agentToken: '\[redacted\]', agentId: '[^']+', conversationId: 'conv_[0-9a-f]+' \}$/);
      assert.ok(!inspect(agent).includes(token) && !JSON.stringify(agent).includes(token));
    } finally {
      if (saved === undefined) delete process.env.AGENTGATE_API_KEY;
      else process.env.AGENTGATE_API_KEY = saved;
    }
  });

  it('finds the gate from baseUrl, else AGENTGATE_URL, else http://127.0.0.1:8080', async () => {
    const saved = process.env.AGENTGATE_URL;
    try {
      delete process.env.AGENTGATE_URL;
      assert.equal(new QWEDClient().baseUrl, 'http://127.0.0.1:8080');
      assert.equal(DEFAULT_BASE_URL, 'http://127.0.0.1:8080');
      process.env.AGENTGATE_URL = gate.url + '/';
      const fromEnv = new QWEDClient();
      assert.equal(fromEnv.baseUrl, gate.url);
      assert.equal((await fromEnv.health()).status, 'ok');
      assert.equal(new QWEDClient({ baseUrl: proxy.url }).baseUrl, proxy.url);
    } finally {
      if (saved === undefined) delete process.env.AGENTGATE_URL;
      else process.env.AGENTGATE_URL = saved;
    }
  });
});
