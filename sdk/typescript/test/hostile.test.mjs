// A hostile or misconfigured server in place of the gate (no gate needed): a redirect to another host
// must not carry the client's credentials there, and an endless or oversized answer must end the call
// with a typed error instead of filling the process's memory.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { QWEDClient, QWEDError, MAX_RESPONSE_BYTES } from '../dist/index.js';

/** serve listens on a free loopback port with handler; returns { url, stop }. */
async function serve(handler) {
  const server = createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, stop: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }) };
}

describe('a hostile server', () => {
  it('follows no redirect: the other host never sees the API key, the agent token or the body', async () => {
    const seen = [];
    const other = await serve((req, res) => {
      seen.push({ path: req.url, key: req.headers['x-api-key'], auth: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"agent_id":"agt_x","decision":"APPROVED","status":"active"}');
    });
    const front = await serve((req, res) => {
      res.writeHead(307, { location: other.url.replace('127.0.0.1', 'localhost') + req.url, 'content-type': 'application/json' });
      res.end('{"decision":"APPROVED"}');
    });
    try {
      const admin = new QWEDClient({ apiKey: 'qwed_hostile_key', baseUrl: front.url, maxRetries: 0 });
      await assert.rejects(admin.getAgent('agt_x'), (e) => e instanceof QWEDError && e.status === 307);
      const agent = new QWEDClient({ agentToken: 'agent_hostile_token', baseUrl: front.url, maxRetries: 0 });
      await assert.rejects(
        agent.verifyAction({ agentId: 'agt_x', action: { type: 'calculate', query: '1+1' }, context: { conversation_id: 'c', step_number: 1 } }),
        (e) => e instanceof QWEDError && e.status === 307,
      );
      assert.deepEqual(seen, []);
    } finally {
      await front.stop();
      await other.stop();
    }
  });

  it('stops reading an endless answer at MAX_RESPONSE_BYTES with a typed error', async () => {
    const chunk = Buffer.alloc(1 << 20, 0x20);
    const endless = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      res.on('close', () => res.removeAllListeners('drain'));
      pump();
    });
    const declared = await serve((req, res) => {
      res.writeHead(503, { 'content-type': 'application/json', 'content-length': String(2 ** 40) });
      res.write('{');
    });
    try {
      const c = new QWEDClient({ apiKey: 'qwed_k', baseUrl: endless.url, maxRetries: 0, timeoutMs: 60_000 });
      await assert.rejects(c.getAgent('agt_x'), (e) => e instanceof QWEDError && e.code === 'QWED-SDK-RESPONSE' && /longer than/.test(e.message));
      const d = new QWEDClient({ apiKey: 'qwed_k', baseUrl: declared.url, maxRetries: 0, timeoutMs: 60_000 });
      await assert.rejects(d.getAgent('agt_x'), (e) => e instanceof QWEDError && e.code === 'QWED-SDK-RESPONSE');
      assert.equal(MAX_RESPONSE_BYTES, 64 * 1024 * 1024);
    } finally {
      await endless.stop();
      await declared.stop();
    }
  });
});

describe('the address', () => {
  it('refuses a baseUrl with user information, a query or a fragment, never echoing it', () => {
    // inspect and toJSON print baseUrl: a secret put in it would be printed with the client.
    for (const baseUrl of ['http://admin:qwed_secret_in_url@127.0.0.1:1', 'http://127.0.0.1:1/?api_key=qwed_secret_in_url', 'http://127.0.0.1:1/#qwed_secret_in_url', 'ftp://qwed_secret_in_url']) {
      assert.throws(() => new QWEDClient({ apiKey: 'k', baseUrl }), (e) => e instanceof TypeError && !e.message.includes('qwed_secret_in_url'), baseUrl);
    }
    assert.equal(new QWEDClient({ apiKey: 'k', baseUrl: 'https://gate.example/prefix/' }).baseUrl, 'https://gate.example/prefix');
  });
});
