// Offline attestation checks on the real gate's tokens and on tampered ones, each verdict compared
// with the gate's own verifier (agentgate verify-attestation).
import { before, after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { promisify } from 'node:util';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGate, gateBinary } from './gate.mjs';
import { startProxy } from './proxy.mjs';
import { QWEDClient, AttestationError, ServerError, JWKS_REFETCH_MS, verifyAttestation, parseJWKS, decodeAttestation, MAX_TOKEN_BYTES } from '../dist/index.js';

const run = promisify(execFile);
// node:crypto's WebCrypto: the same object as the global one, which Node 18 does not have.
const { subtle } = webcrypto;
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const b64u = (buf) => Buffer.from(buf).toString('base64url');
const json64 = (o) => b64u(JSON.stringify(o));
const parts = (t) => t.split('.');
const decode = (seg) => JSON.parse(Buffer.from(seg, 'base64url').toString());

let gate;
let client;
let jwks;
let jwksFile;
let tmp;
let decisionToken;
let a2aToken;

/** goVerdict runs the gate's own verifier on token: true when it prints VALID. */
async function goVerdict(token, extra = []) {
  try {
    const { stdout } = await run(gateBinary(), ['verify-attestation', '--jwks', jwksFile, ...extra, token]);
    return stdout.startsWith('VALID');
  } catch (e) {
    if (typeof e.stdout === 'string' && e.stdout.startsWith('INVALID')) return false;
    throw e;
  }
}

/** expectInvalid checks that the SDK refuses token with code, and that the gate's verifier does too. */
async function expectInvalid(token, code, opts = {}, set = jwks, compareWithGate = true) {
  await assert.rejects(verifyAttestation(token, set, opts), (e) => {
    assert.ok(e instanceof AttestationError, String(e));
    assert.equal(e.code, `QWED-SDK-ATTESTATION-${code}`, e.message);
    return true;
  });
  if (compareWithGate && set === jwks && !opts.kind && !opts.now) assert.equal(await goVerdict(token), false, 'the gate\'s verifier accepts it');
}

/** signWith signs header.claims with an ECDSA P-256 key, low-S, as the gate does. */
async function signWith(privateKey, header, claims) {
  const input = `${json64(header)}.${json64(claims)}`;
  const sig = new Uint8Array(await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, new TextEncoder().encode(input)));
  let s = BigInt('0x' + Buffer.from(sig.subarray(32)).toString('hex'));
  if (s > N >> 1n) s = N - s;
  sig.set(Buffer.from(s.toString(16).padStart(64, '0'), 'hex'), 32);
  return `${input}.${b64u(sig)}`;
}

before(async () => {
  gate = await startGate(['--refusal-rate', '0']);
  const admin = new QWEDClient({ apiKey: gate.adminKey, baseUrl: gate.url });
  const key = (await admin.issuePrincipalKey({ principalId: 'org_att' })).api_key;
  client = new QWEDClient({ apiKey: key, baseUrl: gate.url });
  const reg = await client.registerAgent({ name: 'Attested', type: 'supervised', principalId: 'org_att', permissions: { allowed_engines: ['math'] } });
  const d = await client.verifyAction({ agentId: reg.agent_id, agentToken: reg.agent_token, action: { type: 'calculate', query: '6*7' }, context: { conversation_id: 'c', step_number: 1 }, options: { require_attestation: true } });
  decisionToken = d.attestation;
  for (const a of ['buyer', 'seller']) await client.a2aTrust({ agent: a });
  const verdict = await client.a2aIntercept({
    sender_agent_id: 'buyer', receiver_agent_id: 'seller', payload_type: 'financial_transaction', trace_id: 'trace_1',
    payload: { data: { claimed_total: 150.0, line_items: [{ description: 'A', amount: 50.0, quantity: 2 }, { description: 'B', amount: 25.0, quantity: 2 }] } },
  });
  assert.equal(verdict.status, 'forwarded');
  a2aToken = verdict.attestation_jwt;
  jwks = await client.jwks();
  tmp = mkdtempSync(join(tmpdir(), 'agentgate-ts-att-'));
  jwksFile = join(tmp, 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify(jwks));
});
after(async () => {
  await gate?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('verifyAttestation on the gate\'s tokens', () => {
  it('accepts a decision attestation, as the gate\'s verifier does, from an object, text or bytes JWKS', async () => {
    const claims = await verifyAttestation(decisionToken, jwks);
    assert.equal(claims.decision, 'APPROVED');
    assert.match(claims.iss, /^did:qwed:node:node_/);
    assert.equal(await goVerdict(decisionToken), true);
    assert.deepEqual(await verifyAttestation(decisionToken, JSON.stringify(jwks)), claims);
    assert.deepEqual(await verifyAttestation(decisionToken, new TextEncoder().encode(JSON.stringify(jwks))), claims);
    // The client fetches the gate's JWKS itself.
    assert.deepEqual(await client.verifyAttestation(decisionToken), claims);
    assert.deepEqual(decodeAttestation(decisionToken), claims);
  });

  it('accepts an A2A verdict attestation as kind a2a only, and a decision one as kind decision only', async () => {
    const claims = await client.verifyAttestation(a2aToken, { kind: 'a2a' });
    assert.equal(claims.qwed_a2a.verdict, 'forwarded');
    assert.equal(claims.jti, 'trace_1');
    // (The gate's verifier takes either kind, by its typ: the kind is the caller's expectation.)
    await expectInvalid(a2aToken, 'TYPE', {}, jwks, false);
    await expectInvalid(decisionToken, 'TYPE', { kind: 'a2a' });
  });

  it('refuses tampered claims and a flipped signature bit', async () => {
    const [h, c, s] = parts(decisionToken);
    const forged = { ...decode(c), decision: 'DENIED' };
    await expectInvalid(`${h}.${json64(forged)}.${s}`, 'SIGNATURE');
    const sig = Buffer.from(s, 'base64url');
    sig[10] ^= 1;
    await expectInvalid(`${h}.${c}.${b64u(sig)}`, 'SIGNATURE');
  });

  it('refuses the high-S form of a valid signature, which plain ECDSA would accept', async () => {
    const [h, c, s] = parts(decisionToken);
    const sig = Buffer.from(s, 'base64url');
    const high = N - BigInt('0x' + sig.subarray(32).toString('hex'));
    const malleable = Buffer.concat([sig.subarray(0, 32), Buffer.from(high.toString(16).padStart(64, '0'), 'hex')]);
    const k = jwks.keys.find((x) => x.kid === decode(h).kid);
    const pub = await subtle.importKey('jwk', { kty: 'EC', crv: 'P-256', x: k.x, y: k.y }, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
    assert.equal(await subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, pub, malleable, new TextEncoder().encode(`${h}.${c}`)), true);
    await expectInvalid(`${h}.${c}.${b64u(malleable)}`, 'SIGNATURE');
  });

  it('refuses alg none and HS256, another typ, a crit header, a missing or unknown kid', async () => {
    const [h, c, s] = parts(decisionToken);
    const hdr = decode(h);
    await expectInvalid(`${json64({ ...hdr, alg: 'none' })}.${c}.`, 'ALGORITHM');
    await expectInvalid(`${json64({ ...hdr, alg: 'HS256' })}.${c}.${s}`, 'ALGORITHM');
    await expectInvalid(`${json64({ ...hdr, typ: 'JWT' })}.${c}.${s}`, 'TYPE');
    await expectInvalid(`${json64({ ...hdr, crit: ['exp'] })}.${c}.${s}`, 'MALFORMED');
    const { kid: _kid, ...noKid } = hdr;
    await expectInvalid(`${json64(noKid)}.${c}.${s}`, 'UNKNOWN-KEY');
    await expectInvalid(`${json64({ ...hdr, kid: 'not-a-gate-key' })}.${c}.${s}`, 'UNKNOWN-KEY');
  });

  it('refuses an expired token, and malformed ones', async () => {
    const exp = decode(parts(decisionToken)[1]).exp;
    assert.equal(typeof exp, 'number');
    await expectInvalid(decisionToken, 'EXPIRED', { now: exp * 1000 });
    assert.ok(await verifyAttestation(decisionToken, jwks, { now: (exp - 1) * 1000 }));
    for (const t of ['', 'abc', 'a.b', 'a.b.c.d', '!!.e30.AA', `${parts(decisionToken)[0]}.not*base64.AA`]) await expectInvalid(t, 'MALFORMED');
    await expectInvalid('a'.repeat(MAX_TOKEN_BYTES + 1), 'MALFORMED');
  });

  it('refuses a token signed by another key under the gate\'s kid, and issuers that are not a node', async () => {
    const [h, c] = parts(decisionToken);
    const hdr = decode(h);
    const claims = decode(c);
    const mine = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    await expectInvalid(await signWith(mine.privateKey, hdr, claims), 'SIGNATURE');
    // With its own key in a JWKS, a correct token verifies; a wrong issuer does not.
    const pubJwk = await subtle.exportKey('jwk', mine.publicKey);
    const set = { keys: [{ kty: 'EC', crv: 'P-256', x: pubJwk.x, y: pubJwk.y, kid: 'k1', use: 'sig', alg: 'ES256' }] };
    const head = { alg: 'ES256', kid: 'k1', typ: 'qwed-attestation+jwt' };
    assert.equal((await verifyAttestation(await signWith(mine.privateKey, head, claims), set)).decision, 'APPROVED');
    await expectInvalid(await signWith(mine.privateKey, head, { ...claims, iss: 'did:qwed:node:' }), 'ISSUER', {}, set);
    await expectInvalid(await signWith(mine.privateKey, head, { ...claims, iss: 'did:evil:node_1' }), 'ISSUER', {}, set);
    await expectInvalid(await signWith(mine.privateKey, head, { ...claims, exp: 'tomorrow' }), 'MALFORMED', {}, set);
  });

  it('fetches the gate\'s JWKS once, and once more for an unknown kid (a rotation)', async () => {
    const fetched = [];
    const c = new QWEDClient({ baseUrl: gate.url, fetch: (u, i) => { fetched.push(new URL(u).pathname); return fetch(u, i); } });
    await c.verifyAttestation(decisionToken);
    await c.verifyAttestation(a2aToken, { kind: 'a2a' });
    assert.deepEqual(fetched, ['/.well-known/jwks.json']);
    const [h, cl, s] = parts(decisionToken);
    await assert.rejects(c.verifyAttestation(`${json64({ ...decode(h), kid: 'rotated-key' })}.${cl}.${s}`), (e) => e.code === 'QWED-SDK-ATTESTATION-UNKNOWN-KEY');
    assert.deepEqual(fetched, ['/.well-known/jwks.json', '/.well-known/jwks.json']);
    await c.verifyAttestation(decisionToken);
    // More unknown kids within JWKS_REFETCH_MS: refused from the cache, no fetch each.
    for (const kid of ['made-up-1', 'made-up-2', 'made-up-3']) {
      await assert.rejects(c.verifyAttestation(`${json64({ ...decode(h), kid })}.${cl}.${s}`), (e) => e.code === 'QWED-SDK-ATTESTATION-UNKNOWN-KEY');
    }
    assert.equal(fetched.length, 2);
    assert.equal(JWKS_REFETCH_MS, 30_000);
  });

  it('refuses a signature re-encoded with its unused trailing bits set, as the gate\'s strict decoder does', async () => {
    const [h, c, s] = parts(decisionToken);
    // 64 bytes take 86 characters: the last one carries 4 unused bits, zero in the canonical form.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(s.at(-1));
    assert.equal(last & 0b1111, 0);
    const twin = `${h}.${c}.${s.slice(0, -1)}${alphabet[last | 1]}`;
    assert.deepEqual(Buffer.from(twin.split('.')[2], 'base64url'), Buffer.from(s, 'base64url'), 'a lenient decoder reads the same bytes');
    await expectInvalid(twin, 'MALFORMED');
  });

  it('gives the gate\'s verdict on 60 random mutations of a valid token, and only AttestationErrors', async () => {
    // A fixed-seed xorshift32: the same mutations every run.
    let x = 0x2545f491;
    const rnd = (n) => {
      x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
      return x % n;
    };
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    const tokens = [];
    for (let i = 0; i < 60; i++) {
      const at = rnd(decisionToken.length);
      switch (rnd(3)) {
        case 0: tokens.push(decisionToken.slice(0, at) + alphabet[rnd(alphabet.length)] + decisionToken.slice(at + 1)); break;
        case 1: tokens.push(decisionToken.slice(0, at) + decisionToken.slice(at + 1)); break;
        default: tokens.push(decisionToken.slice(0, at) + alphabet[rnd(alphabet.length)] + decisionToken.slice(at));
      }
    }
    const mine = [];
    for (const [i, t] of tokens.entries()) {
      try {
        await verifyAttestation(t, jwks);
        mine.push(true);
      } catch (e) {
        assert.ok(e instanceof AttestationError, `mutation ${i}: ${e}`);
        mine.push(false);
      }
    }
    // The gate's verifier, a process per token, six at a time.
    const gates = new Array(tokens.length);
    let next = 0;
    await Promise.all(Array.from({ length: 6 }, async () => {
      while (next < tokens.length) {
        const i = next++;
        gates[i] = await goVerdict(tokens[i]);
      }
    }));
    for (const [i, t] of tokens.entries()) {
      assert.equal(mine[i], gates[i], `mutation ${i} (${t === decisionToken ? 'unchanged' : 'changed'}): the SDK says ${mine[i] ? 'VALID' : 'INVALID'}`);
    }
  });

  it('does not cache a JWKS fetch that failed', async () => {
    const proxy = await startProxy(gate.url);
    try {
      proxy.next({ kind: 'answer', status: 503, body: { error: { code: 'QWED-SYS-002', message: 'unavailable', details: {} } } });
      const c = new QWEDClient({ baseUrl: proxy.url, maxRetries: 0 });
      await assert.rejects(c.verifyAttestation(decisionToken), (e) => e instanceof ServerError && e.code === 'QWED-SYS-002');
      assert.equal((await c.verifyAttestation(decisionToken)).decision, 'APPROVED');
      assert.equal(proxy.seen.length, 2);
    } finally {
      await proxy.stop();
    }
  });

  it('refuses JWKS documents the gate would refuse', () => {
    const k = jwks.keys[0];
    const bad = [
      '{', '{}', { keys: [] }, { keys: [{ kty: 'RSA', n: 'x', e: 'AQAB', kid: 'r' }] },
      { keys: [{ ...k, crv: 'P-384' }] }, { keys: [{ ...k, use: 'enc' }] }, { keys: [{ ...k, alg: 'ES384' }] },
      { keys: [{ ...k, x: k.x.slice(2) }] }, { keys: [k, k] }, { keys: [{ ...k, kid: '' }] },
    ];
    for (const j of bad) assert.throws(() => parseJWKS(j), (e) => e instanceof AttestationError && e.code === 'QWED-SDK-ATTESTATION-JWKS', JSON.stringify(j));
    assert.equal(parseJWKS(jwks).size, jwks.keys.length);
  });
});
