/**
 * Offline verification of the gate's attestations: ES256 JSON Web Tokens
 * checked against the gate's JWKS (GET /.well-known/jwks.json) with WebCrypto,
 * in the order and with the checks of the gate's own verifier (agentgate
 * verify-attestation): size, compact form, no member name repeated in the
 * header or the claims (exactly or in another case), header (no "crit", alg ES256, typ
 * of the token's kind, a kid), the kid in the JWKS, a low-S signature that
 * verifies, claims that are a JSON object, exp and nbf against the clock, and
 * an issuer DID of the kind's prefix followed by a node id.
 */
import { AttestationError } from './errors.js';

/** The largest token accepted (the gate's attest.MaxTokenBytes). */
export const MAX_TOKEN_BYTES = 8 << 10;
/** The largest JWKS document accepted (the gate's attest.MaxJWKSBytes). */
export const MAX_JWKS_BYTES = 1 << 20;

/** The kinds of token the gate signs, with their typ header and issuer prefix. */
export const ATTESTATION_KINDS = {
  /** A decision's attestation (verify_action, tool calls, POST /verify with include_attestation). */
  decision: { typ: 'qwed-attestation+jwt', issuerPrefix: 'did:qwed:node:' },
  /** A QWED A2A verdict's attestation_jwt. */
  a2a: { typ: 'qwed-a2a-attestation+jwt', issuerPrefix: 'did:qwed:a2a:' },
  /** An execute decision (X-Agentgate-Decision). */
  execute: { typ: 'qwed-execute-decision+jwt', issuerPrefix: 'did:qwed:node:' },
} as const;

/** The kind of a token: which typ and issuer it must carry. */
export type AttestationKind = keyof typeof ATTESTATION_KINDS;

/** One key of a JWKS document. */
export interface JWK {
  kty: string;
  crv?: string;
  x?: string;
  y?: string;
  kid?: string;
  use?: string;
  alg?: string;
  [key: string]: unknown;
}

/** A JWKS document. */
export interface JWKS {
  keys: JWK[];
}

/** The claims of a decision attestation (other kinds carry their own members). */
export interface AttestationClaims {
  iss: string;
  sub?: string;
  jti?: string;
  iat?: number;
  exp?: number;
  decision?: string;
  request_digest?: string;
  agent_id?: string;
  conversation_id?: string;
  step?: number;
  seq?: number;
  partition?: number;
  risk_level?: string;
  kind?: string;
  engine?: string;
  status?: string;
  [key: string]: unknown;
}

/** Options of verifyAttestation. */
export interface VerifyAttestationOptions {
  /** The kind of token (default "decision"). */
  kind?: AttestationKind;
  /** The time checked against exp and nbf, in milliseconds since the epoch (default now). */
  now?: number;
}

// P-256's group order n, and n/2: a signature's s above n/2 is the high-S form the gate refuses.
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const P256_HALF_N = P256_N >> 1n;

type Subtle = {
  importKey(format: 'jwk', key: object, alg: object, extractable: boolean, usages: string[]): Promise<unknown>;
  verify(alg: object, key: unknown, signature: Uint8Array, data: Uint8Array): Promise<boolean>;
};

/** subtle returns WebCrypto's SubtleCrypto (globalThis.crypto, or node:crypto's webcrypto on Node 18). */
async function subtle(): Promise<Subtle> {
  const g = (globalThis as { crypto?: { subtle?: Subtle } }).crypto;
  if (g?.subtle) return g.subtle;
  const mod = 'node:crypto';
  const nc = (await import(/* webpackIgnore: true */ mod)) as { webcrypto?: { subtle?: Subtle } };
  if (nc.webcrypto?.subtle) return nc.webcrypto.subtle;
  throw new AttestationError('WebCrypto is not available', { code: 'QWED-SDK-ATTESTATION-CRYPTO' });
}

function fail(code: string, message: string): never {
  throw new AttestationError(message, { code: `QWED-SDK-ATTESTATION-${code}` });
}

/**
 * b64urlDecode decodes unpadded base64url strictly, as the gate does (RawURLEncoding.Strict()):
 * another alphabet, padding, or unused trailing bits that are not zero are refused, so each byte
 * string has one encoding and a token cannot be altered without changing what it decodes to.
 */
export function b64urlDecode(s: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(s) || s.length % 4 === 1) throw new TypeError('not base64url');
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4);
  const bin = atob(b64);
  if (btoa(bin) !== b64) throw new TypeError('not canonical base64url: unused bits are set');
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * foldChar is a code point's simple case folding, as the gate's decoder compares member names:
 * the lower case of its upper case when each is one code point (K, the Kelvin sign and k fold
 * together, ſ with s, ς with σ), else its lower case when one code point (ẞ with ß, never ß with
 * ss), else itself. The dotless ı stays apart from i and I; a lone surrogate is U+FFFD, as Go
 * decodes it.
 */
function foldChar(c: string): string {
  const u = c.codePointAt(0) as number;
  if (u >= 0xd800 && u <= 0xdfff) return '\ufffd';
  if (u === 0x131) return c;
  const up = c.toUpperCase();
  if ([...up].length === 1) {
    const low = up.toLowerCase();
    if ([...low].length === 1) return low;
  }
  const low = c.toLowerCase();
  return [...low].length === 1 ? low : c;
}

/**
 * repeatedMember walks the JSON text (already parsed, so well-formed) and describes the first
 * member whose name repeats in its object, at any depth, exactly or in another case (the gate's
 * rule); undefined when none does. JSON.parse keeps the last of two equal names, and the gate's
 * decoder matches claims to fields without regard to case: such a token could name one agent or
 * decision here and another there.
 */
function repeatedMember(text: string): string | undefined {
  const objects: (Map<string, string> | null)[] = []; // per open value: its names by fold, null for an array
  let expectName = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const names = objects[objects.length - 1];
      if (expectName && names) {
        const name = JSON.parse(text.slice(i, j + 1)) as string;
        const folded = Array.from(name, foldChar).join('');
        const first = names.get(folded);
        if (first !== undefined) {
          return first === name ? `member ${JSON.stringify(name)} appears twice` : `member ${JSON.stringify(name)} repeats member ${JSON.stringify(first)} in another case`;
        }
        names.set(folded, name);
        expectName = false;
      }
      i = j;
    } else if (ch === '{') {
      objects.push(new Map());
      expectName = true;
    } else if (ch === '[') {
      objects.push(null);
    } else if (ch === '}' || ch === ']') {
      objects.pop();
      expectName = false;
    } else if (ch === ',') {
      expectName = objects[objects.length - 1] != null;
    }
  }
  return undefined;
}

function jsonSegment(seg: string, what: string): Record<string, unknown> {
  let v: unknown;
  let text = '';
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(b64urlDecode(seg));
    v = JSON.parse(text);
  } catch {
    fail('MALFORMED', `malformed attestation token: the ${what} is not base64url JSON`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) fail('MALFORMED', `malformed attestation token: the ${what} is not a JSON object`);
  const repeated = repeatedMember(text);
  if (repeated !== undefined) fail('MALFORMED', `malformed attestation token: the ${what}'s ${repeated}`);
  return v as Record<string, unknown>;
}

/** parseJWKS validates a JWKS document (a string, bytes or an object) and returns its P-256 keys by kid. */
export function parseJWKS(jwks: JWKS | string | Uint8Array): Map<string, JWK> {
  let doc: unknown = jwks;
  if (typeof jwks === 'string' || jwks instanceof Uint8Array) {
    const text = typeof jwks === 'string' ? jwks : new TextDecoder().decode(jwks);
    if (text.length > MAX_JWKS_BYTES) fail('JWKS', `invalid JWKS: document exceeds ${MAX_JWKS_BYTES} bytes`);
    try {
      doc = JSON.parse(text);
    } catch {
      fail('JWKS', 'invalid JWKS: not JSON');
    }
  }
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) fail('JWKS', 'invalid JWKS: no keys array');
  const out = new Map<string, JWK>();
  keys.forEach((k: JWK, i: number) => {
    if (!k || typeof k !== 'object' || k.kty !== 'EC') return;
    const where = `key ${i} (kid ${JSON.stringify(k.kid)})`;
    if (typeof k.kid !== 'string' || k.kid === '') fail('JWKS', `invalid JWKS: ${where}: missing kid`);
    if (k.crv !== 'P-256') fail('JWKS', `invalid JWKS: ${where}: curve is not P-256`);
    if (k.use !== undefined && k.use !== 'sig') fail('JWKS', `invalid JWKS: ${where}: use is not sig`);
    if (k.alg !== undefined && k.alg !== 'ES256') fail('JWKS', `invalid JWKS: ${where}: alg is not ES256`);
    let x: Uint8Array, y: Uint8Array;
    try {
      x = b64urlDecode(String(k.x));
      y = b64urlDecode(String(k.y));
    } catch {
      fail('JWKS', `invalid JWKS: ${where}: x and y must be base64url`);
    }
    if (x.length !== 32 || y.length !== 32) fail('JWKS', `invalid JWKS: ${where}: x and y must be 32-byte coordinates`);
    if (out.has(k.kid)) fail('JWKS', `invalid JWKS: kid ${JSON.stringify(k.kid)} appears more than once`);
    out.set(k.kid, k);
  });
  if (out.size === 0) fail('JWKS', 'invalid JWKS: no EC P-256 signing key');
  return out;
}

function bigIntOf(b: Uint8Array): bigint {
  let n = 0n;
  for (const x of b) n = (n << 8n) | BigInt(x);
  return n;
}

/**
 * verifyAttestation checks token offline against jwks and returns its claims,
 * or throws an AttestationError whose code names the failed check:
 * QWED-SDK-ATTESTATION-MALFORMED, -ALGORITHM, -TYPE, -UNKNOWN-KEY,
 * -SIGNATURE, -EXPIRED, -ISSUER or -JWKS. A valid token says the gate signed
 * it; act on its decision (or, for an A2A verdict, qwed_a2a.verdict).
 */
export async function verifyAttestation(token: string, jwks: JWKS | string | Uint8Array, options: VerifyAttestationOptions = {}): Promise<AttestationClaims> {
  const kind = ATTESTATION_KINDS[options.kind ?? 'decision'];
  if (!kind) fail('TYPE', `unknown attestation kind ${JSON.stringify(options.kind)}`);
  if (typeof token !== 'string') fail('MALFORMED', 'malformed attestation token: not a string');
  if (token.length > MAX_TOKEN_BYTES) fail('MALFORMED', `malformed attestation token: ${token.length} bytes exceed ${MAX_TOKEN_BYTES}`);
  const parts = token.split('.');
  if (parts.length !== 3) fail('MALFORMED', 'malformed attestation token: not a compact JWS');
  const [h, c, s] = parts as [string, string, string];
  const header = jsonSegment(h, 'header');
  if ('crit' in header) fail('MALFORMED', 'malformed attestation token: critical header extensions are not supported');
  if (header['alg'] !== 'ES256') fail('ALGORITHM', `attestation algorithm is not ES256: alg ${JSON.stringify(header['alg'])}`);
  if (header['typ'] !== kind.typ) fail('TYPE', `token is not a ${kind.typ}: typ ${JSON.stringify(header['typ'])}`);
  const kid = header['kid'];
  if (typeof kid !== 'string' || kid === '') fail('UNKNOWN-KEY', 'attestation signing key is unknown: header has no kid');
  const keys = parseJWKS(jwks);
  const jwk = keys.get(kid);
  if (!jwk) fail('UNKNOWN-KEY', `attestation signing key is unknown: kid ${JSON.stringify(kid)} is not in the JWKS`);
  // The claims must decode before the signature is checked (as the gate's verifier: a token whose
  // claims are not JSON is malformed, whatever its signature); they are trusted only once it verifies.
  const claims = jsonSegment(c, 'claims') as AttestationClaims;
  let sig: Uint8Array;
  try {
    sig = b64urlDecode(s);
  } catch {
    fail('MALFORMED', 'malformed attestation token: the signature is not base64url');
  }
  if (sig.length !== 64) fail('SIGNATURE', 'attestation signature is invalid: not 64 bytes');
  if (bigIntOf(sig.subarray(32)) > P256_HALF_N) fail('SIGNATURE', 'attestation signature is invalid: high-S signature (only s <= n/2 is accepted)');
  const sc = await subtle();
  const key = await sc.importKey('jwk', { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, ext: true }, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
  const ok = await sc.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, sig, new TextEncoder().encode(`${h}.${c}`));
  if (!ok) fail('SIGNATURE', 'attestation signature is invalid');
  const now = (options.now ?? Date.now()) / 1000;
  if (claims.exp !== undefined) {
    if (typeof claims.exp !== 'number') fail('MALFORMED', 'malformed attestation token: exp is not a number');
    if (now >= claims.exp) fail('EXPIRED', `attestation has expired at ${new Date(claims.exp * 1000).toISOString()}`);
  }
  if (claims['nbf'] !== undefined) {
    if (typeof claims['nbf'] !== 'number') fail('MALFORMED', 'malformed attestation token: nbf is not a number');
    if (now < claims['nbf']) fail('EXPIRED', 'attestation is not valid yet (nbf)');
  }
  const iss = claims.iss;
  if (typeof iss !== 'string' || !iss.startsWith(kind.issuerPrefix) || iss.length === kind.issuerPrefix.length) {
    fail('ISSUER', `attestation issuer is not a qwed node: iss ${JSON.stringify(iss)}`);
  }
  return claims;
}

/** decodeAttestation returns a token's claims WITHOUT verifying it (for display; never act on them). */
export function decodeAttestation(token: string): AttestationClaims {
  const parts = String(token).split('.');
  if (parts.length !== 3) fail('MALFORMED', 'malformed attestation token: not a compact JWS');
  return jsonSegment(parts[1] as string, 'claims') as AttestationClaims;
}
