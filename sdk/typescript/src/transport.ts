/**
 * The HTTP transport every client method goes through: the gate's address,
 * credentials, Idempotency-Key, timeout, retries and the mapping of answers to
 * results or typed errors.
 */
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  QWEDError,
  RateLimitError,
  errorClassFor,
} from './errors.js';

/** The SDK's version, sent in the User-Agent header (test/types.test.mjs keeps it equal to package.json's). */
export const VERSION = '0.1.0';
/** The User-Agent of every request (browsers, which forbid setting it, send their own). */
export const USER_AGENT = `agentgate-sdk-typescript/${VERSION}`;

/** The gate's address when neither baseUrl nor AGENTGATE_URL names one. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
/** The per-attempt timeout when timeoutMs is not given. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Retries after the first attempt when maxRetries is not given. */
export const DEFAULT_MAX_RETRIES = 2;
/** The first backoff; each retry doubles it, up to MAX_BACKOFF_MS, with jitter. */
export const INITIAL_BACKOFF_MS = 250;
/** The longest backoff between two attempts. */
export const MAX_BACKOFF_MS = 8_000;
/** The longest Retry-After honoured; a gate asking for longer is answered with the error at once. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** The longest answer body read (a compliance report of a long-lived agent included); a longer one ends the call. */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** The fetch function the client calls (the global fetch by default). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Options of every call. */
export interface RequestOptions {
  /** Aborts the call (every attempt and the waits between them). */
  signal?: AbortSignal;
  /** Per-attempt timeout in milliseconds (default: the client's). */
  timeoutMs?: number;
  /** Retries after the first attempt (default: the client's). */
  maxRetries?: number;
  /** The Idempotency-Key of a write (default: a fresh random one per call, reused on its retries). */
  idempotencyKey?: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

/** Which credential a call sends: the agent token first, the API key first, or none (a public endpoint). */
export type AuthPreference = 'agent' | 'key' | 'none';

/** What a call expects back. */
export type ResponseKind = 'json' | 'text' | 'bytes';

/** A request as a client method describes it. */
export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path, its variable segments already encoded. */
  path: string;
  query?: Record<string, unknown> | undefined;
  body?: unknown;
  auth?: AuthPreference;
  /** The agent token of this call (overrides the client's). */
  agentToken?: string | undefined;
  response?: ResponseKind;
  /** A write that carries its own request id (a CloudEvent's source and id): no Idempotency-Key. */
  keyed?: boolean;
  /** Extra headers of the endpoint (X-Confirmation-Token, X-Agent-ID, QWED-Protocol-Version). */
  headers?: Record<string, string | undefined>;
  options?: RequestOptions | undefined;
}

/** Settings of a Transport. */
export interface TransportSettings {
  baseUrl: string;
  apiKey?: string | undefined;
  agentToken?: string | undefined;
  timeoutMs: number;
  maxRetries: number;
  fetch: FetchLike;
  headers: Record<string, string>;
}

/** env reads an environment variable where there is a process (Node, Deno, Bun), else undefined. */
export function env(name: string): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name] || undefined;
}

/** resolveBaseUrl applies the address rule: the argument, else AGENTGATE_URL, else DEFAULT_BASE_URL; it throws a TypeError for anything but an http(s) URL with a host and no user information, query or fragment. */
export function resolveBaseUrl(baseUrl?: string): string {
  const url = (baseUrl || env('AGENTGATE_URL') || DEFAULT_BASE_URL).replace(/\/+$/, '');
  // The URL is never echoed: inspect and toJSON print baseUrl, and a secret put in it would go with it.
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new TypeError('the gate\'s address is not a URL');
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !u.host) throw new TypeError('the gate\'s address must be an http:// or https:// URL with a host');
  if (u.username || u.password) throw new TypeError('the gate\'s address may not carry user information: pass apiKey or agentToken');
  if (url.includes('?') || url.includes('#')) throw new TypeError('the gate\'s address may not have a query or a fragment');
  return url;
}

/** The members of an answer that hold a secret returned once: readable, but not enumerable. */
const SECRET_MEMBERS = ['agent_token', 'api_key', 'confirmationToken'];

/**
 * hideSecrets makes the secret members of an answer non-enumerable: the
 * caller reads them (result.agent_token), but console.log, util.inspect and
 * JSON.stringify of the result leave them out, so logging a result does not
 * log a credential.
 */
export function hideSecrets<T>(body: T): T {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    for (const k of SECRET_MEMBERS) {
      if (Object.prototype.hasOwnProperty.call(body, k)) Object.defineProperty(body, k, { enumerable: false });
    }
  }
  return body;
}

/** snake turns "afterSeq" into "after_seq" (query parameter names are the gate's). */
function snake(k: string): string {
  return k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

/** queryString renders q (undefined and null members left out) as "?a=1&b=2", or "". */
export function queryString(q: Record<string, unknown> | undefined): string {
  if (!q) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === null) continue;
    p.append(snake(k), v instanceof Date ? v.toISOString() : String(v));
  }
  const s = p.toString();
  return s ? '?' + s : '';
}

/** seg encodes one path segment, refusing an empty one (a call on "/agents//verify" is a bug). */
export function seg(name: string, v: string): string {
  if (typeof v !== 'string' || v === '') throw new TypeError(`${name} must be a non-empty string`);
  return encodeURIComponent(v);
}

/** The source of random UUIDs: WebCrypto's, or node:crypto's where the global is missing (Node 18). */
const uuids: { randomUUID(): string } | undefined =
  (globalThis as { crypto?: { randomUUID?: () => string } }).crypto?.randomUUID
    ? (globalThis as unknown as { crypto: { randomUUID(): string } }).crypto
    : await import('node:crypto' as string).then((m: { randomUUID(): string }) => m, () => undefined);

/** newIdempotencyKey returns a fresh random key (a version 4 UUID). */
export function newIdempotencyKey(): string {
  if (!uuids) throw new TypeError('no random UUID source: this runtime has neither WebCrypto nor node:crypto');
  return uuids.randomUUID();
}

/**
 * isResult reports whether an answer body is a result rather than an error: a decision, an A2A
 * verdict, a JSON-RPC answer of proxy mode, or a QWED protocol outcome other than ERROR (BLOCKED is
 * 403, TIMEOUT 504 …).
 */
export function isResult(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  if (typeof b['decision'] === 'string') return true; // a DecisionReply (DENIED 409, BUDGET_EXCEEDED 429 …)
  if (b['jsonrpc'] === '2.0') return true; // proxy mode: the agent's or the gate's JSON-RPC answer
  const st = b['status'];
  if (typeof b['verified'] === 'boolean') return typeof st === 'string' && st !== 'ERROR'; // POST /verify
  return (st === 'forwarded' || st === 'blocked' || st === 'rate_limited' || st === 'error') && 'trace_id' in b;
}

/** parseRetryAfter reads a Retry-After header (seconds or an HTTP date) as milliseconds. */
export function parseRetryAfter(v: string | null, now = Date.now()): number | undefined {
  if (!v) return undefined;
  const s = Number(v);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.max(0, t - now) : undefined;
}

/** backoff is the wait before retry n (1-based): doubling from INITIAL_BACKOFF_MS, capped, jittered to 50–100 %. */
export function backoff(n: number, random = Math.random): number {
  const base = Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** (n - 1));
  return base / 2 + random() * (base / 2);
}

const retryStatuses = new Set([408, 429, 502, 503, 504]);

/** sleep waits ms, or rejects when signal aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** An answer read from the gate. */
interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** Transport sends Calls; the client's credentials live here in private fields only. */
export class Transport {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  #apiKey: string | undefined;
  #agentToken: string | undefined;
  readonly #fetch: FetchLike;
  readonly #headers: Record<string, string>;

  constructor(s: TransportSettings) {
    this.baseUrl = s.baseUrl;
    this.timeoutMs = s.timeoutMs;
    this.maxRetries = s.maxRetries;
    this.#apiKey = s.apiKey;
    this.#agentToken = s.agentToken;
    this.#fetch = s.fetch;
    this.#headers = s.headers;
  }

  /** hasApiKey reports whether an API key is set (the key itself is never readable). */
  get hasApiKey(): boolean {
    return !!this.#apiKey;
  }

  /** hasAgentToken reports whether an agent token is set. */
  get hasAgentToken(): boolean {
    return !!this.#agentToken;
  }

  /** setAgentToken replaces the agent token (after a rotation). */
  setAgentToken(token: string | undefined): void {
    this.#agentToken = token;
  }

  /** derive returns a Transport with the same settings and another agent token. */
  derive(agentToken: string | undefined, apiKey = this.#apiKey): Transport {
    return new Transport({
      baseUrl: this.baseUrl,
      apiKey,
      agentToken,
      timeoutMs: this.timeoutMs,
      maxRetries: this.maxRetries,
      fetch: this.#fetch,
      headers: this.#headers,
    });
  }

  /** headersFor builds the request headers of c (one credential, never both). */
  #headersFor(c: Call, idempotencyKey: string | undefined): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT, ...this.#headers };
    if (c.body !== undefined) h['content-type'] = 'application/json';
    const token = c.agentToken ?? this.#agentToken;
    const useToken = token && (c.auth === 'agent' || !this.#apiKey);
    if (c.auth === 'none') {
      // a public endpoint: no credential leaves the client
    } else if (useToken) h['authorization'] = `Bearer ${token}`;
    else if (this.#apiKey) h['x-api-key'] = this.#apiKey;
    if (idempotencyKey) h['idempotency-key'] = idempotencyKey;
    for (const [k, v] of Object.entries(c.headers ?? {})) if (v !== undefined) h[k.toLowerCase()] = v;
    for (const [k, v] of Object.entries(c.options?.headers ?? {})) h[k.toLowerCase()] = v;
    return h;
  }

  /** request sends c, retrying as the retry rule says, and returns the answer's body. */
  async request<T>(c: Call): Promise<T> {
    const o = c.options ?? {};
    const write = c.method !== 'GET';
    const key = write && c.keyed !== false ? (o.idempotencyKey ?? newIdempotencyKey()) : undefined;
    const url = this.baseUrl + c.path + queryString(c.query);
    const headers = this.#headersFor(c, key);
    const payload = c.body === undefined ? undefined : JSON.stringify(c.body);
    const retries = Math.max(0, o.maxRetries ?? this.maxRetries);
    const timeoutMs = o.timeoutMs ?? this.timeoutMs;
    const where = `${c.method} ${c.path}`;
    for (let attempt = 0; ; attempt++) {
      let wait: number | undefined;
      let failure: QWEDError;
      try {
        const a = await this.#attempt(url, c, headers, payload, timeoutMs, o.signal, key);
        if ((a.status >= 200 && a.status < 300) || (a.status >= 400 && isResult(a.body))) return hideSecrets(a.body as T);
        failure = errorFrom(a, where, key);
        if (!retryStatuses.has(a.status)) throw failure;
        wait = parseRetryAfter(a.headers.get('retry-after'));
        if (wait !== undefined && wait > MAX_RETRY_AFTER_MS) throw failure;
      } catch (e) {
        if (e instanceof QWEDError && !(e instanceof APIConnectionError)) throw e;
        if (o.signal?.aborted) throw new APIUserAbortError(`${where}: aborted by the caller`, { code: 'QWED-SDK-ABORTED', requestId: key, cause: o.signal.reason });
        failure = e instanceof QWEDError ? e : new APIConnectionError(`${where}: ${(e as Error)?.message ?? 'connection failed'}`, { code: 'QWED-SDK-CONNECTION', requestId: key, cause: e });
      }
      if (attempt >= retries) throw failure;
      await sleep(wait ?? backoff(attempt + 1), o.signal).catch((reason) => {
        throw new APIUserAbortError(`${where}: aborted by the caller`, { code: 'QWED-SDK-ABORTED', requestId: key, cause: reason });
      });
    }
  }

  /** attempt sends one request, bounded by timeoutMs and the caller's signal. */
  async #attempt(url: string, c: Call, headers: Record<string, string>, payload: string | undefined, timeoutMs: number, signal: AbortSignal | undefined, requestId: string | undefined): Promise<Answer> {
    const ctl = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort();
    }, timeoutMs);
    const onAbort = () => ctl.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const where = `${c.method} ${c.path}`;
    try {
      // No redirect is followed: fetch drops Authorization on a cross-origin redirect but would carry
      // x-api-key (and a 307's body) to whatever host the answer names. The 3xx is the call's error.
      const init: RequestInit = { method: c.method, headers, signal: ctl.signal, redirect: 'manual' };
      if (payload !== undefined) init.body = payload;
      const res = await this.#fetch(url, init);
      let body: unknown;
      const ctype = res.headers.get('content-type') ?? '';
      const json = ctype.includes('json');
      const bytes = await readBounded(res, where, requestId);
      if (res.ok && c.response === 'bytes') body = bytes;
      else if (res.ok && c.response === 'text') body = utf8.decode(bytes);
      else {
        const text = utf8.decode(bytes);
        body = text;
        if (json && text !== '') {
          try {
            body = JSON.parse(text);
          } catch {
            throw new QWEDError(`${where}: the gate answered ${res.status} with malformed JSON`, { code: 'QWED-SDK-RESPONSE', status: res.status, requestId });
          }
        }
      }
      return { status: res.status, headers: res.headers, body };
    } catch (e) {
      if (e instanceof QWEDError) throw e;
      if (timedOut) throw new APITimeoutError(`${where}: no answer within ${timeoutMs} ms`, { code: 'QWED-SDK-TIMEOUT', requestId, cause: e });
      throw e;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

const utf8 = new TextDecoder();

/** readBounded reads res's body, ending the call with a QWED-SDK-RESPONSE error past MAX_RESPONSE_BYTES. */
async function readBounded(res: Response, where: string, requestId: string | undefined): Promise<Uint8Array> {
  const tooLong = () => new QWEDError(`${where}: the answer is longer than ${MAX_RESPONSE_BYTES} bytes`, { code: 'QWED-SDK-RESPONSE', status: res.status, requestId });
  const declared = Number(res.headers.get('content-length') ?? '');
  if (declared > MAX_RESPONSE_BYTES) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLong();
  }
  if (!res.body) return new Uint8Array(await res.arrayBuffer()); // a fetch without body streams
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.byteLength;
    if (n > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw tooLong();
    }
    parts.push(value);
  }
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** errorFrom maps an error answer to its typed error. */
function errorFrom(a: Answer, where: string, requestId: string | undefined): QWEDError {
  const err = (a.body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  const code = typeof err?.code === 'string' ? err.code : `HTTP-${a.status}`;
  const msg = typeof err?.message === 'string' ? err.message : typeof a.body === 'string' && a.body ? a.body.slice(0, 200) : 'no error body';
  const details = err?.details && typeof err.details === 'object' ? (err.details as Record<string, unknown>) : {};
  const retryAfterMs = parseRetryAfter(a.headers.get('retry-after'));
  const Cls = errorClassFor(a.status);
  const init = { code, status: a.status, details, requestId, retryAfter: retryAfterMs === undefined ? undefined : retryAfterMs / 1000 };
  const text = `${code}: ${msg} (${where} answered ${a.status})`;
  return Cls === RateLimitError ? new RateLimitError(text, init) : new Cls(text, init);
}
