// A real HTTP proxy in front of the gate for the transport tests: it forwards every request and
// records what it saw (method, path, Idempotency-Key), and can be told how to answer the next
// requests: drop the connection after the gate answered (a lost answer), answer itself with a status
// and headers before the gate sees the request (a load balancer's 503), or hold the request (a gate
// that does not answer in time).
import { createServer } from 'node:http';

/** startProxy listens on a free loopback port and forwards to target. */
export async function startProxy(target) {
  const seen = [];
  const plan = []; // what to do with the next requests, in order: {kind, status, headers, body}
  const held = new Set();
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    seen.push({ method: req.method, path: req.url, idempotencyKey: req.headers['idempotency-key'], headers: { ...req.headers } });
    const step = plan.shift() ?? { kind: 'forward' };
    if (step.kind === 'answer') {
      res.writeHead(step.status, { 'content-type': 'application/json', ...(step.headers ?? {}) });
      res.end(JSON.stringify(step.body ?? {}));
      return;
    }
    if (step.kind === 'hold') {
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.connection;
    delete headers['content-length'];
    const up = await fetch(target + req.url, { method: req.method, headers, body: body.length ? body : undefined });
    const text = Buffer.from(await up.arrayBuffer());
    if (step.kind === 'drop') {
      // The gate decided and recorded; the client never hears it.
      req.socket.destroy();
      return;
    }
    const out = {};
    up.headers.forEach((v, k) => (out[k] = v));
    delete out['content-length'];
    delete out['content-encoding'];
    delete out['transfer-encoding'];
    delete out.connection;
    res.writeHead(up.status, out);
    res.end(text);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    seen,
    /** next queues what to do with the next requests. */
    next(...steps) {
      plan.push(...steps);
    },
    reset() {
      seen.length = 0;
      plan.length = 0;
    },
    async stop() {
      for (const r of held) r.destroy();
      server.closeAllConnections?.();
      await new Promise((r) => server.close(r));
    },
  };
}
