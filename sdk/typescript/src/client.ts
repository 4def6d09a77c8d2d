/**
 * QWEDClient: one method per endpoint of the gate's HTTP API.
 *
 * Conventions: methods that write take one object (path ids included, in
 * camelCase; the gate's own structures, such as action, context, permissions
 * and budget, keep the gate's snake_case members); methods that read take the
 * id positionally and an optional object of query parameters (camelCase,
 * sent in the gate's snake_case: afterSeq → after_seq). Every parameter
 * object also takes the RequestOptions (signal, timeoutMs, maxRetries,
 * idempotencyKey, headers).
 */
import { AttestationError } from './errors.js';
import {
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  Transport,
  env,
  resolveBaseUrl,
  seg,
  type AuthPreference,
  type Call,
  type FetchLike,
  type RequestOptions,
} from './transport.js';
import {
  verifyAttestation as verifyOffline,
  type AttestationClaims,
  type AttestationKind,
  type JWKS,
} from './attestation.js';
import type * as T from './types.gen.js';

type R = T.Responses;
type Q = T.Queries;

/** Options of a QWEDClient. */
export interface ClientOptions {
  /** A principal's or the admin's API key, sent as X-API-Key (default: the AGENTGATE_API_KEY environment variable). */
  apiKey?: string;
  /** An agent token, sent as Authorization: Bearer on the agent's own calls. */
  agentToken?: string;
  /** The gate's address (else AGENTGATE_URL, else http://127.0.0.1:8080). */
  baseUrl?: string;
  /** Per-attempt timeout in milliseconds (default 10000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** The fetch to call (default globalThis.fetch). */
  fetch?: FetchLike;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/** A parameter object: its own members and the RequestOptions. */
export type Params<P> = P & RequestOptions;

/** The members of an agent-scoped call. */
export interface AgentScoped {
  /** The agent. */
  agentId: string;
  /** This call's agent token (default: the client's). */
  agentToken?: string;
}

export interface RegisterAgentParams {
  name: string;
  principalId: string;
  /** supervised, autonomous or trusted (QWED-Agent spec v1.1 §3.3). */
  type?: string;
  description?: string;
  framework?: string;
  model?: string;
  permissions?: T.Permissions;
  budget?: T.Limits;
  trustLevel?: T.TrustLevel;
}

/**
 * The answer to registerAgent: the agent and its token. The token is in the answer to the request
 * that minted it only: a retry answered from the log (the first answer was lost) has none.
 */
export type Registration = R['registerAgent'];

export interface VerifyActionParams extends AgentScoped {
  action: T.Action;
  /** conversation_id and step_number (QWED-Agent spec v1.1 §9.1). */
  context: T.ActionContext;
  /** The gate's options: require_attestation, risk_threshold. */
  options?: T.Options;
}

export interface VerifyToolCallParams extends AgentScoped {
  toolName: string;
  parameters?: unknown;
  context?: T.ActionContext;
  justification?: string;
  estimatedCostUsd?: T.USD;
  estimatedTokens?: number;
  options?: T.Options;
}

export interface LogExecutionParams extends AgentScoped {
  actionId: string;
  success: boolean;
  costUsd?: T.USD;
  tokens?: number;
  resultHash?: string;
  /**
   * The text the action produced (at most 64 KiB): the gate scans it for
   * PII and hashes it, never records it. Its SHA-256 is the reply's
   * result_hash when resultHash is not given (a different one is
   * refused); a card number, IBAN, SSN, credential or private key in it
   * flags the execution (pii_violation).
   */
  output?: string;
  /** The action ran in a sandbox: required when its decision said sandbox_required, else the execution is flagged (sandbox_violation). */
  sandboxed?: boolean;
  /** An optional description of the sandbox (kind, image digest, attestation reference), at most 256 bytes. */
  sandbox?: string;
  /**
   * The decision's attestation. When given, it is verified offline against
   * the gate's JWKS before the execution is logged, and must be the
   * attestation of this action (jti) by this agent (agent_id); else an
   * AttestationError is thrown and nothing is logged.
   */
  attestation?: string;
}

export interface RequestTrustParams extends AgentScoped {
  toLevel: T.TrustLevel;
  fromLevel?: T.TrustLevel;
  justification?: string;
  evidence?: T.TrustEvidence;
  request?: string;
}

export interface ApprovalParams {
  approvalId: string;
  reason?: string;
}

export interface VerifyParams {
  /** The engine: math, logic, stats, fact, code, sql, image, reasoning, natural_language. */
  type?: string;
  /** Alias of type. */
  engine?: string;
  query: string;
  params?: Record<string, unknown>;
  options?: { timeout_ms?: number; include_proof?: boolean; include_attestation?: boolean };
  metadata?: { request_id?: string; correlation_id?: string; trace_id?: string };
  /** The QWED-Protocol-Version header (default: the gate's). */
  protocolVersion?: string;
}

export interface VerifyBatchParams {
  items: Array<Omit<VerifyParams, 'protocolVersion' | 'engine'> & { id?: string }>;
  options?: { max_parallel?: number; fail_fast?: boolean; timeout_ms?: number; include_proof?: boolean; include_attestation?: boolean };
  metadata?: { request_id?: string; correlation_id?: string; trace_id?: string };
  protocolVersion?: string;
}

export interface ExecuteParams {
  businessId: string;
  /** The request object the business receives. */
  request: unknown;
  /** The agent (sent as agent_id). */
  agentId?: string;
  agentToken?: string;
}

/** The query of getAgentActivity. */
export type ActivityQuery = Q['getAgentActivity'];

/** The query of exportComplianceReport besides its format. */
export type ReportQuery = Omit<Q['exportComplianceReport'], 'format'>;

/** One entry of an agent's activity log. */
export type ActivityEntry = NonNullable<R['getAgentActivity']['activities']>[number];

/** A page of an agent's activity log, iterable over its entries. */
export type ActivityPage = R['getAgentActivity'] & Iterable<ActivityEntry>;

/** Options of verifyAttestation. */
export interface ClientVerifyAttestationOptions {
  /** The JWKS to check against (default: the gate's, fetched once and cached by this client). */
  jwks?: JWKS | string | Uint8Array;
  kind?: AttestationKind;
  now?: number;
}

const inspect = Symbol.for('nodejs.util.inspect.custom');

/** The least time between two fetches of the JWKS for unknown kids (the gate's JWKS is cacheable for 5 min). */
export const JWKS_REFETCH_MS = 30_000;

/** reqOpts splits the RequestOptions off a parameter object. */
function reqOpts(p: RequestOptions | undefined): RequestOptions {
  if (!p) return {};
  const o: RequestOptions = {};
  if (p.signal !== undefined) o.signal = p.signal;
  if (p.timeoutMs !== undefined) o.timeoutMs = p.timeoutMs;
  if (p.maxRetries !== undefined) o.maxRetries = p.maxRetries;
  if (p.idempotencyKey !== undefined) o.idempotencyKey = p.idempotencyKey;
  if (p.headers !== undefined) o.headers = p.headers;
  return o;
}

/** query removes the RequestOptions from a read's parameter object. */
function query(p: RequestOptions | undefined): Record<string, unknown> | undefined {
  if (!p) return undefined;
  const { signal: _s, timeoutMs: _t, maxRetries: _m, idempotencyKey: _i, headers: _h, ...q } = p;
  return q as Record<string, unknown>;
}

/** clean drops undefined members (the gate's decoder is strict; undefined would be left out anyway). */
function clean<O extends Record<string, unknown>>(o: O): O {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

/** QWEDClient calls every endpoint of the gate's HTTP API. */
export class QWEDClient {
  /** The gate's address. */
  readonly baseUrl: string;
  /** @internal */
  protected readonly transport: Transport;
  #jwks: Promise<JWKS> | undefined;
  #jwksRefetchedAt = -Infinity;

  /**
   * @param options the client's settings
   * @param internal keyFromEnv: false when the client must hold no API key of the environment
   * (QWEDAgentClient acts as its agent only)
   */
  constructor(options: ClientOptions = {}, internal: { keyFromEnv?: boolean } = {}) {
    const f = options.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (!f) throw new TypeError('no fetch: pass options.fetch on a runtime without a global fetch');
    this.baseUrl = resolveBaseUrl(options.baseUrl);
    this.transport = new Transport({
      baseUrl: this.baseUrl,
      apiKey: options.apiKey ?? (internal.keyFromEnv === false ? undefined : env('AGENTGATE_API_KEY')),
      agentToken: options.agentToken,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      headers: { ...(options.headers ?? {}) },
    });
  }

  /** The client as util.inspect and console.log show it: toJSON's members, never the credentials. */
  [inspect](): string {
    const members = Object.entries(this.toJSON()).map(([k, v]) => `${k}: ${v === undefined ? 'undefined' : `'${String(v)}'`}`);
    return `${this.constructor.name} { ${members.join(', ')} }`;
  }

  /** toJSON renders the client without its credentials (present ones show as [redacted]). */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, apiKey: this.transport.hasApiKey ? '[redacted]' : undefined, agentToken: this.transport.hasAgentToken ? '[redacted]' : undefined };
  }

  /** call sends one request. @internal */
  protected call<R>(c: Call): Promise<R> {
    return this.transport.request<R>(c);
  }

  #write<R>(method: Call['method'], path: string, body: unknown, p: RequestOptions | undefined, auth: AuthPreference = 'key', extra: Partial<Call> = {}): Promise<R> {
    return this.call<R>({ method, path, body, auth, options: reqOpts(p), ...extra });
  }

  #read<R>(path: string, p?: RequestOptions, extra: Partial<Call> = {}): Promise<R> {
    return this.call<R>({ method: 'GET', path, query: query(p), auth: 'key', options: reqOpts(p), ...extra });
  }

  // ---- Agents (QWED-Agent spec v1.1) ----

  /** registerAgent registers an agent (POST /agents/register, principal key); the answer holds its token, returned once. */
  registerAgent(p: Params<RegisterAgentParams>): Promise<Registration> {
    const body: T.RegisterBody = {
      agent: clean({ name: p.name, type: p.type, principal_id: p.principalId, description: p.description, framework: p.framework, model: p.model }),
    };
    if (p.permissions !== undefined) body.permissions = p.permissions;
    if (p.budget !== undefined) body.budget = p.budget;
    if (p.trustLevel !== undefined) body.trust_level = p.trustLevel;
    return this.#write('POST', '/agents/register', body, p);
  }

  /** getAgent reads an agent (GET /agents/{id}). */
  getAgent(agentId: string, p?: RequestOptions): Promise<R['getAgent']> {
    return this.#read(`/agents/${seg('agentId', agentId)}`, p);
  }

  /** getAgentBudget reads an agent's budget status (GET /agents/{id}/budget, QWED-Agent spec v1.1 §6.3). */
  getAgentBudget(agentId: string, p?: RequestOptions): Promise<R['getAgentBudget']> {
    return this.#read(`/agents/${seg('agentId', agentId)}/budget`, p);
  }

  /**
   * getAgentActivity reads a page of an agent's activity log (GET /agents/{id}/activity; from, to,
   * limit, afterSeq; QWED-Agent spec v1.1 §7.2). The page iterates over its entries
   * (`for (const entry of page)`); next_after_seq names the next page, and
   * iterateAgentActivity reads them all.
   */
  async getAgentActivity(agentId: string, p?: Params<ActivityQuery>): Promise<ActivityPage> {
    const page = await this.#read<R['getAgentActivity']>(`/agents/${seg('agentId', agentId)}/activity`, p);
    Object.defineProperty(page, Symbol.iterator, { enumerable: false, value: () => (page.activities ?? [])[Symbol.iterator]() });
    return page as ActivityPage;
  }

  /** iterateAgentActivity yields every entry of an agent's activity log in the period, page after page (next_after_seq). */
  async *iterateAgentActivity(agentId: string, p: Params<Omit<ActivityQuery, 'afterSeq'>> = {}): AsyncGenerator<ActivityEntry, void, undefined> {
    let after: number | undefined;
    for (;;) {
      const page = await this.getAgentActivity(agentId, after === undefined ? p : { ...p, afterSeq: after });
      yield* page;
      if (page.next_after_seq === null || page.next_after_seq === undefined) return;
      after = page.next_after_seq;
    }
  }

  /** getAgentState reads an agent's state at a log position or time (GET /agents/{id}/state; atSeq or atTime). */
  getAgentState(agentId: string, p?: Params<Q['getAgentState']>): Promise<R['getAgentState']> {
    return this.#read(`/agents/${seg('agentId', agentId)}/state`, p);
  }

  /**
   * exportComplianceReport reads an agent's compliance report (GET
   * /agents/{id}/compliance-report, QWED-Agent spec v1.1 §7.3): format "json"
   * (default) is the verifiable bundle as an object; "csv" a string; "pdf" bytes.
   */
  exportComplianceReport(agentId: string, p?: Params<ReportQuery & { format?: 'json' }>): Promise<R['exportComplianceReport']>;
  exportComplianceReport(agentId: string, p: Params<ReportQuery & { format: 'csv' }>): Promise<string>;
  exportComplianceReport(agentId: string, p: Params<ReportQuery & { format: 'pdf' }>): Promise<Uint8Array>;
  exportComplianceReport(agentId: string, p?: Params<Q['exportComplianceReport']>): Promise<R['exportComplianceReport'] | string | Uint8Array> {
    const response = p?.format === 'pdf' ? 'bytes' : p?.format === 'csv' ? 'text' : 'json';
    return this.#read(`/agents/${seg('agentId', agentId)}/compliance-report`, p, { response });
  }

  /**
   * verifyAction asks the gate before an action runs (POST /agents/{id}/verify).
   * The decision is the result, whatever it is: APPROVED, CORRECTED, PENDING,
   * DENIED or BUDGET_EXCEEDED (with error.code); only a refused request throws.
   */
  verifyAction(p: Params<VerifyActionParams>): Promise<T.DecisionReply> {
    const body: T.ActionVerifyBody = { action: p.action, context: p.context };
    if (p.options !== undefined) body.options = p.options;
    return this.#write('POST', `/agents/${seg('agentId', p.agentId)}/verify`, body, p, 'agent', { agentToken: p.agentToken });
  }

  /** verifyToolCall asks the gate before a tool runs (POST /agents/{id}/tools/{tool}); the decision is the result. */
  verifyToolCall(p: Params<VerifyToolCallParams>): Promise<T.DecisionReply> {
    const tool = seg('toolName', p.toolName);
    const body: T.ToolVerifyBody = {
      tool_call: clean({ tool_name: p.toolName, parameters: p.parameters, estimated_cost_usd: p.estimatedCostUsd, estimated_tokens: p.estimatedTokens }),
    };
    if (p.context !== undefined) body.context = p.context;
    if (p.justification !== undefined) body.justification = p.justification;
    if (p.options !== undefined) body.options = p.options;
    return this.#write('POST', `/agents/${seg('agentId', p.agentId)}/tools/${tool}`, body, p, 'agent', { agentToken: p.agentToken });
  }

  /** logExecution records what an approved action really cost (POST /agents/{id}/executions). */
  async logExecution(p: Params<LogExecutionParams>): Promise<T.ExecutionReply> {
    const path = `/agents/${seg('agentId', p.agentId)}/executions`;
    if (p.attestation !== undefined) {
      const claims = await this.verifyAttestation(p.attestation);
      if (claims.jti !== p.actionId) throw new AttestationError(`the attestation is of action ${JSON.stringify(claims.jti)}, not ${JSON.stringify(p.actionId)}`, { code: 'QWED-SDK-ATTESTATION-MISMATCH' });
      if (claims.agent_id !== undefined && claims.agent_id !== p.agentId) throw new AttestationError(`the attestation is of agent ${JSON.stringify(claims.agent_id)}, not ${JSON.stringify(p.agentId)}`, { code: 'QWED-SDK-ATTESTATION-MISMATCH' });
    }
    const body: T.ExecutionLogBody = clean({ action_id: p.actionId, success: p.success, cost_usd: p.costUsd, tokens: p.tokens, result_hash: p.resultHash, output: p.output, sandboxed: p.sandboxed, sandbox: p.sandbox });
    return this.#write('POST', path, body, p, 'agent', { agentToken: p.agentToken });
  }

  /**
   * requestTrust asks for a trust elevation (POST /agents/{id}/trust, QWED-Agent
   * spec v1.1 §8.2). Without fromLevel the agent's current level is read first
   * (GET /agents/{id}): the gate checks that from_level is the agent's level.
   */
  async requestTrust(p: Params<RequestTrustParams>): Promise<R['requestTrust']> {
    let from = p.fromLevel;
    if (from === undefined) {
      const read: RequestOptions = {};
      if (p.signal) read.signal = p.signal;
      from = (await this.call<R['getAgent']>({ method: 'GET', path: `/agents/${seg('agentId', p.agentId)}`, auth: 'agent', agentToken: p.agentToken, options: read })).trust_level;
    }
    const body: T.TrustRequestBody = clean({ to_level: p.toLevel, from_level: from, justification: p.justification, evidence: p.evidence, request: p.request });
    return this.#write('POST', `/agents/${seg('agentId', p.agentId)}/trust`, body, p, 'agent', { agentToken: p.agentToken });
  }

  /** setTrustLevel sets an agent's trust level (POST /agents/{id}/trust-level, principal key). */
  setTrustLevel(p: Params<{ agentId: string; trustLevel: T.TrustLevel; reason?: string }>): Promise<R['setTrustLevel']> {
    return this.#write('POST', `/agents/${seg('agentId', p.agentId)}/trust-level`, clean({ trust_level: p.trustLevel, reason: p.reason }), p);
  }

  /** suspendAgent suspends an agent, or reinstates it with suspended: false (POST /agents/{id}/suspend). */
  suspendAgent(p: Params<{ agentId: string; reason?: string; suspended?: boolean }>): Promise<R['suspendAgent']> {
    return this.#write('POST', `/agents/${seg('agentId', p.agentId)}/suspend`, clean({ suspended: p.suspended ?? true, reason: p.reason }), p);
  }

  /** resumeAgent reinstates a suspended agent (suspendAgent with suspended: false). */
  resumeAgent(p: Params<{ agentId: string; reason?: string }>): Promise<R['suspendAgent']> {
    return this.suspendAgent({ ...p, suspended: false });
  }

  /** fileComplaint files a complaint about an agent, which suspends it (POST /agents/{id}/complaints). */
  fileComplaint(p: Params<{ agentId: string; reason?: string }>): Promise<R['fileComplaint']> {
    return this.#write('POST', `/agents/${seg('agentId', p.agentId)}/complaints`, clean({ reason: p.reason }), p);
  }

  /** rotateToken replaces an agent's token (POST /agents/{id}/token/rotate); the new one is returned once. */
  rotateToken(p: Params<AgentScoped>): Promise<R['rotateToken']> {
    return this.#write('POST', `/agents/${seg('agentId', p.agentId)}/token/rotate`, {}, p, 'agent', { agentToken: p.agentToken });
  }

  /** revokeToken revokes an agent's token until one is rotated in (DELETE /agents/{id}/token, principal key). */
  revokeToken(p: Params<{ agentId: string }>): Promise<R['revokeToken']> {
    return this.#write('DELETE', `/agents/${seg('agentId', p.agentId)}/token`, {}, p);
  }

  // ---- Principals ----

  /** putTools replaces a principal's tool registry (PUT /principals/{id}/tools, QWED-Agent spec v1.1 §5.3). */
  putTools(p: Params<{ principalId: string; tools: T.ToolSpec[] }>): Promise<R['putTools']> {
    return this.#write('PUT', `/principals/${seg('principalId', p.principalId)}/tools`, { tools: p.tools }, p);
  }

  /**
   * putPrincipalPermissions sets a principal's default path and egress policy for all its agents
   * (PUT /principals/{id}/permissions, QWED-Agent spec v1.1 §2.2): an agent's own lists only narrow it.
   * Lists left out are cleared; hosts come back as A-labels.
   */
  putPrincipalPermissions(
    p: Params<{
      principalId: string;
      allowedPaths?: string[];
      deniedPaths?: string[];
      allowedHosts?: string[];
      allowedSchemes?: string[];
      allowedPorts?: number[];
    }>,
  ): Promise<R['putPrincipalPermissions']> {
    const body: T.PrincipalPermissions = {};
    if (p.allowedPaths) body.allowed_paths = p.allowedPaths;
    if (p.deniedPaths) body.denied_paths = p.deniedPaths;
    if (p.allowedHosts) body.allowed_hosts = p.allowedHosts;
    if (p.allowedSchemes) body.allowed_schemes = p.allowedSchemes;
    if (p.allowedPorts) body.allowed_ports = p.allowedPorts;
    return this.#write('PUT', `/principals/${seg('principalId', p.principalId)}/permissions`, body, p);
  }

  /** issuePrincipalKey issues an API key for a principal (POST /principals/{id}/keys, admin key); returned once. */
  issuePrincipalKey(p: Params<{ principalId: string }>): Promise<R['issuePrincipalKey']> {
    return this.#write('POST', `/principals/${seg('principalId', p.principalId)}/keys`, {}, p);
  }

  /** rotatePrincipalKey replaces a principal's key by a new one (POST /principals/{id}/keys/{key_id}/rotate). */
  rotatePrincipalKey(p: Params<{ principalId: string; keyId: string }>): Promise<R['rotatePrincipalKey']> {
    return this.#write('POST', `/principals/${seg('principalId', p.principalId)}/keys/${seg('keyId', p.keyId)}/rotate`, {}, p);
  }

  /** revokePrincipalKey revokes a principal's key (DELETE /principals/{id}/keys/{key_id}). */
  revokePrincipalKey(p: Params<{ principalId: string; keyId: string }>): Promise<R['revokePrincipalKey']> {
    return this.#write('DELETE', `/principals/${seg('principalId', p.principalId)}/keys/${seg('keyId', p.keyId)}`, {}, p);
  }

  // ---- Approvals ----

  /** listApprovals lists a page of approvals (GET /approvals; status pending|approved|denied|expired, limit, after). */
  listApprovals(p?: Params<Q['listApprovals']>): Promise<R['listApprovals']> {
    return this.#read('/approvals', p);
  }

  /** iterateApprovals yields every approval (of a status), page after page (next_after). */
  async *iterateApprovals(p: Params<Omit<Q['listApprovals'], 'after'>> = {}): AsyncGenerator<T.Approval, void, undefined> {
    let after: string | undefined;
    for (;;) {
      const page = await this.listApprovals(after === undefined ? p : { ...p, after });
      yield* page.approvals ?? [];
      if (!page.next_after) return;
      after = page.next_after;
    }
  }

  /** getApproval reads an approval (GET /approvals/{id}); the agent it concerns may read it with its token. */
  getApproval(approvalId: string, p?: RequestOptions): Promise<R['getApproval']> {
    return this.#read(`/approvals/${seg('approvalId', approvalId)}`, p);
  }

  /** approve resolves a pending approval as approved (POST /approvals/{id}/approve, principal key). */
  approve(p: Params<ApprovalParams>): Promise<R['approve']> {
    return this.#write('POST', `/approvals/${seg('approvalId', p.approvalId)}/approve`, clean({ reason: p.reason }), p);
  }

  /** deny resolves a pending approval as denied (POST /approvals/{id}/deny, principal key). */
  deny(p: Params<ApprovalParams>): Promise<R['deny']> {
    return this.#write('POST', `/approvals/${seg('approvalId', p.approvalId)}/deny`, clean({ reason: p.reason }), p);
  }

  // ---- QWED protocol v1.0 engines ----

  /** verify runs one request on an engine (POST /verify); VERIFIED, FAILED, CORRECTED … are results. */
  verify(p: Params<VerifyParams>): Promise<T.VerifyResponse> {
    const body = clean({ type: p.type ?? p.engine, query: p.query, params: p.params, options: p.options, metadata: p.metadata });
    return this.#write('POST', '/verify', body, p, 'key', { headers: { 'QWED-Protocol-Version': p.protocolVersion } });
  }

  /** verifyBatch runs up to 100 requests (POST /verify with batch: true). */
  verifyBatch(p: Params<VerifyBatchParams>): Promise<T.BatchVerifyResponse> {
    const body = clean({ batch: true, items: p.items, options: p.options, metadata: p.metadata });
    return this.#write('POST', '/verify', body, p, 'key', { headers: { 'QWED-Protocol-Version': p.protocolVersion } });
  }

  /** listEngines reads each engine's capabilities (GET /engines). */
  listEngines(p?: RequestOptions): Promise<R['listEngines']> {
    return this.#read('/engines', p);
  }

  // ---- CloudEvents ----

  /**
   * sendEvent sends a command as a structured-mode CloudEvent (POST /events); the answer is the
   * reply CloudEvent. The event's source and id are its request id (no Idempotency-Key): a retry
   * sends the same event, which the gate answers from its log.
   */
  sendEvent(event: T.CloudEvent, p?: RequestOptions): Promise<R['postEvent']> {
    return this.#write('POST', '/events', event, p, 'key', { keyed: false, headers: { 'content-type': 'application/cloudevents+json' } });
  }

  // ---- QWED A2A ----

  /** a2aIntercept verifies one agent-to-agent message (POST /a2a/intercept); the verdict (forwarded, blocked, rate_limited, error) is the result. */
  a2aIntercept(message: T.A2AMessageBody, p?: RequestOptions): Promise<R['a2aIntercept']> {
    return this.#write('POST', '/a2a/intercept', message, p);
  }

  /** a2aTrust adds an agent to the caller's trust boundary (POST /a2a/boundary/trust/{agent}). */
  a2aTrust(p: Params<{ agent: string } & Q['a2aTrust']>): Promise<R['a2aTrust']> {
    return this.#write('POST', `/a2a/boundary/trust/${seg('agent', p.agent)}`, undefined, p, 'key', { query: { principal: p.principal } });
  }

  /** a2aUntrust removes an agent from the trust boundary (DELETE /a2a/boundary/trust/{agent}). */
  a2aUntrust(p: Params<{ agent: string } & Q['a2aUntrust']>): Promise<R['a2aUntrust']> {
    return this.#write('DELETE', `/a2a/boundary/trust/${seg('agent', p.agent)}`, undefined, p, 'key', { query: { principal: p.principal } });
  }

  /** a2aBlock blocks an agent (POST /a2a/boundary/block/{agent}). */
  a2aBlock(p: Params<{ agent: string } & Q['a2aBlock']>): Promise<R['a2aBlock']> {
    return this.#write('POST', `/a2a/boundary/block/${seg('agent', p.agent)}`, undefined, p, 'key', { query: { principal: p.principal } });
  }

  /** a2aUnblock unblocks an agent (DELETE /a2a/boundary/block/{agent}). */
  a2aUnblock(p: Params<{ agent: string } & Q['a2aUnblock']>): Promise<R['a2aUnblock']> {
    return this.#write('DELETE', `/a2a/boundary/block/${seg('agent', p.agent)}`, undefined, p, 'key', { query: { principal: p.principal } });
  }

  /** a2aBlockPair blocks a sender→receiver pair (POST /a2a/boundary/block-pair). */
  a2aBlockPair(p: Params<{ sender: string; receiver: string } & Q['a2aBlockPair']>): Promise<R['a2aBlockPair']> {
    return this.#write('POST', '/a2a/boundary/block-pair', { sender: p.sender, receiver: p.receiver }, p, 'key', { query: { principal: p.principal } });
  }

  /** a2aUnblockPair unblocks a sender→receiver pair (DELETE /a2a/boundary/block-pair). */
  a2aUnblockPair(p: Params<{ sender: string; receiver: string } & Q['a2aUnblockPair']>): Promise<R['a2aUnblockPair']> {
    return this.#write('DELETE', '/a2a/boundary/block-pair', { sender: p.sender, receiver: p.receiver }, p, 'key', { query: { principal: p.principal } });
  }

  /** getA2ABoundary reads the trust boundary (GET /a2a/boundary; principal, list, limit, after, atSeq, atTime). */
  getA2ABoundary(p?: Params<Q['getA2ABoundary']>): Promise<R['getA2ABoundary']> {
    return this.#read('/a2a/boundary', p);
  }

  /** getA2AMetrics reads the A2A verdict counts (GET /a2a/metrics). */
  getA2AMetrics(p?: Params<Q['getA2AMetrics']>): Promise<R['getA2AMetrics']> {
    return this.#read('/a2a/metrics', p);
  }

  /** getA2AHealth reads the A2A gateway's health (GET /a2a/health, public). */
  getA2AHealth(p?: RequestOptions): Promise<R['getA2AHealth']> {
    return this.#read('/a2a/health', p);
  }

  // ---- QWED A2A proxy mode: the gate fronting an A2A agent (serve --a2a-upstream NAME=URL) ----

  /**
   * getA2AAgentCard reads the Agent Card of the A2A agent the gate fronts as
   * name, rewritten so that its JSON-RPC interface is the gate (GET
   * /a2a/proxy/{name}/.well-known/agent-card.json; legacy: A2A 0.3's
   * agent.json). Public: no credential is sent.
   */
  getA2AAgentCard(name: string, p?: Params<{ legacy?: boolean }>): Promise<R['a2aProxyAgentCard']> {
    const file = p?.legacy ? 'agent.json' : 'agent-card.json';
    return this.call({ method: 'GET', path: `/a2a/proxy/${seg('name', name)}/.well-known/${file}`, auth: 'none', options: reqOpts(p) });
  }

  /**
   * a2aProxy sends an A2A JSON-RPC request (SendMessage; message/send of A2A
   * 0.3) to the agent the gate fronts as name (POST /a2a/proxy/{name}); each
   * part is intercepted as a2aIntercept decides it. The JSON-RPC answer is the
   * result whatever its HTTP status: the agent's result or error, or the
   * gate's refusal as a JSON-RPC error whose data is the signed verdict
   * (-32050). a2aVersion is sent as the A2A-Version header (an A2A 1.0 agent
   * wants "1.0"). No Idempotency-Key: the gate remembers forwarded
   * messageIds, so a retry is answered, not forwarded again.
   */
  a2aProxy(p: Params<{ name: string; request: T.JSONRPCRequest; a2aVersion?: string; agentToken?: string }>): Promise<R['a2aProxySend']> {
    return this.#write('POST', `/a2a/proxy/${seg('name', p.name)}`, p.request, p, 'agent', {
      agentToken: p.agentToken,
      keyed: false,
      headers: { 'A2A-Version': p.a2aVersion },
    });
  }

  // ---- Agent Policy Engine: execute, businesses, policies, transactions, webhooks ----

  /** prepareExecute asks for a confirmation token (POST /agp/execute/prepare). */
  prepareExecute(p: Params<ExecuteParams>): Promise<R['prepareExecute']> {
    const body: T.ExecuteBody = clean({ businessId: p.businessId, request: p.request, agent_id: p.agentId });
    return this.#write('POST', '/agp/execute/prepare', body, p, 'agent', { agentToken: p.agentToken });
  }

  /** execute runs a request at a business through the gate (POST /agp/execute, X-Confirmation-Token). */
  execute(p: Params<ExecuteParams & { confirmationToken?: string }>): Promise<R['execute']> {
    const body: T.ExecuteBody = clean({ businessId: p.businessId, request: p.request, agent_id: p.agentId });
    return this.#write('POST', '/agp/execute', body, p, 'agent', { agentToken: p.agentToken, headers: { 'X-Confirmation-Token': p.confirmationToken } });
  }

  /** createBusiness registers a business (POST /businesses). */
  createBusiness(p: Params<T.BusinessBody>): Promise<R['createBusiness']> {
    return this.#write('POST', '/businesses', clean({ id: p.id, name: p.name, categories: p.categories, endpoint: p.endpoint, currency: p.currency }), p);
  }

  /** listBusinesses lists the business registry (GET /businesses). */
  listBusinesses(p?: Params<Q['listBusinesses']>): Promise<R['listBusinesses']> {
    return this.#read('/businesses', p);
  }

  /** getBusiness reads a business (GET /businesses/{id}). */
  getBusiness(businessId: string, p?: RequestOptions): Promise<R['getBusiness']> {
    return this.#read(`/businesses/${seg('businessId', businessId)}`, p);
  }

  /** updateBusiness replaces a business (PUT /businesses/{id}). */
  updateBusiness(p: Params<T.BusinessBody & { businessId: string }>): Promise<R['updateBusiness']> {
    return this.#write('PUT', `/businesses/${seg('businessId', p.businessId)}`, clean({ id: p.id, name: p.name, categories: p.categories, endpoint: p.endpoint, currency: p.currency }), p);
  }

  /** deleteBusiness deletes a business (DELETE /businesses/{id}). */
  deleteBusiness(p: Params<{ businessId: string }>): Promise<R['deleteBusiness']> {
    return this.#write('DELETE', `/businesses/${seg('businessId', p.businessId)}`, undefined, p);
  }

  /** createPolicy creates a consumer policy (POST /policies; consumer: the admin names it). */
  createPolicy(p: Params<{ policy: T.PolicyBody; consumer?: string }>): Promise<R['createPolicy']> {
    return this.#write('POST', '/policies', p.policy, p, 'key', { query: { consumer: p.consumer } });
  }

  /** listPolicies lists a consumer's policies (GET /policies; consumer). */
  listPolicies(p?: Params<Q['listPolicies']>): Promise<R['listPolicies']> {
    return this.#read('/policies', p);
  }

  /** getPolicy reads a policy, or its version at a log position (GET /policies/{id}; consumer, atSeq). */
  getPolicy(policyId: string, p?: Params<Q['getPolicy']>): Promise<R['getPolicy']> {
    return this.#read(`/policies/${seg('policyId', policyId)}`, p);
  }

  /** updatePolicy replaces a policy (PUT /policies/{id}). */
  updatePolicy(p: Params<{ policyId: string; policy: T.PolicyBody; consumer?: string }>): Promise<R['updatePolicy']> {
    return this.#write('PUT', `/policies/${seg('policyId', p.policyId)}`, p.policy, p, 'key', { query: { consumer: p.consumer } });
  }

  /** deletePolicy deletes a policy (DELETE /policies/{id}). */
  deletePolicy(p: Params<{ policyId: string; consumer?: string }>): Promise<R['deletePolicy']> {
    return this.#write('DELETE', `/policies/${seg('policyId', p.policyId)}`, undefined, p, 'key', { query: { consumer: p.consumer } });
  }

  /** listTransactions lists a consumer's transactions (GET /transactions; consumer, status, from, to, limit, after …). */
  listTransactions(p?: Params<Q['listTransactions']>): Promise<R['listTransactions']> {
    return this.#read('/transactions', p);
  }

  /** getTransactionSummary sums a consumer's transactions (GET /transactions/summary). */
  getTransactionSummary(p?: Params<Q['getTransactionSummary']>): Promise<R['getTransactionSummary']> {
    return this.#read('/transactions/summary', p);
  }

  /** getTransactionAnalytics reads a consumer's spending analytics (GET /transactions/analytics). */
  getTransactionAnalytics(p?: Params<Q['getTransactionAnalytics']>): Promise<R['getTransactionAnalytics']> {
    return this.#read('/transactions/analytics', p);
  }

  /** getTransaction reads a transaction, or its state at a log position or time (GET /transactions/{id}). */
  getTransaction(transactionId: string, p?: Params<Q['getTransaction']>): Promise<R['getTransaction']> {
    return this.#read(`/transactions/${seg('transactionId', transactionId)}`, p);
  }

  /** createWebhook registers a webhook (POST /webhooks). */
  createWebhook(p: Params<{ url: string; events?: string[]; consumer?: string }>): Promise<R['createWebhook']> {
    return this.#write('POST', '/webhooks', clean({ url: p.url, events: p.events }), p, 'key', { query: { consumer: p.consumer } });
  }

  /** listWebhooks lists a consumer's webhooks (GET /webhooks; consumer). */
  listWebhooks(p?: Params<Q['listWebhooks']>): Promise<R['listWebhooks']> {
    return this.#read('/webhooks', p);
  }

  /** getWebhook reads a webhook (GET /webhooks/{id}). */
  getWebhook(webhookId: string, p?: Params<Q['getWebhook']>): Promise<R['getWebhook']> {
    return this.#read(`/webhooks/${seg('webhookId', webhookId)}`, p);
  }

  /** updateWebhook replaces a webhook's URL and events (PUT /webhooks/{id}). */
  updateWebhook(p: Params<{ webhookId: string; url: string; events?: string[]; consumer?: string }>): Promise<R['updateWebhook']> {
    return this.#write('PUT', `/webhooks/${seg('webhookId', p.webhookId)}`, clean({ url: p.url, events: p.events }), p, 'key', { query: { consumer: p.consumer } });
  }

  /** deleteWebhook deletes a webhook (DELETE /webhooks/{id}). */
  deleteWebhook(p: Params<{ webhookId: string; consumer?: string }>): Promise<R['deleteWebhook']> {
    return this.#write('DELETE', `/webhooks/${seg('webhookId', p.webhookId)}`, undefined, p, 'key', { query: { consumer: p.consumer } });
  }

  /** listWebhookDeliveries lists deliveries, of one webhook when webhookId is given (GET /webhooks[/{id}]/deliveries). */
  listWebhookDeliveries(p?: Params<Q['listDeliveries']>): Promise<R['listWebhookDeliveries']> {
    if (p?.webhookId) {
      const { webhookId, ...rest } = p;
      return this.#read(`/webhooks/${seg('webhookId', webhookId)}/deliveries`, rest);
    }
    return this.#read('/webhooks/deliveries', p);
  }

  // ---- Operations and attestations ----

  /** health reads GET /healthz. */
  health(p?: RequestOptions): Promise<R['healthz']> {
    return this.#read('/healthz', p);
  }

  /** metrics reads the Prometheus text of GET /metrics. */
  metrics(p?: RequestOptions): Promise<string> {
    return this.#read('/metrics', p, { response: 'text' });
  }

  /** jwks reads the gate's signing keys (GET /.well-known/jwks.json); cached by the client for verifyAttestation. */
  jwks(p?: RequestOptions): Promise<JWKS> {
    return this.#read('/.well-known/jwks.json', p);
  }

  /** openapi reads the gate's OpenAPI 3.1 document of this API (GET /openapi.json). */
  openapi(p?: RequestOptions): Promise<R['getOpenAPI']> {
    return this.#read('/openapi.json', p);
  }

  /**
   * verifyAttestation checks an attestation offline (ES256 with WebCrypto)
   * against jwks, or the gate's JWKS fetched once and cached. A token whose
   * kid the cached set lacks (the gate rotated its keys) fetches the JWKS
   * again, at most once per JWKS_REFETCH_MS, so tokens with made-up kids
   * cannot turn into a stream of fetches. It returns the claims or throws an
   * AttestationError.
   */
  async verifyAttestation(token: string, options: ClientVerifyAttestationOptions = {}): Promise<AttestationClaims> {
    const o = { kind: options.kind ?? 'decision', now: options.now } as { kind: AttestationKind; now?: number };
    if (o.now === undefined) delete o.now;
    if (options.jwks !== undefined) return verifyOffline(token, options.jwks, o);
    const set = await (this.#jwks ?? this.#fetchJWKS());
    try {
      return await verifyOffline(token, set, o);
    } catch (e) {
      if (!(e instanceof AttestationError) || e.code !== 'QWED-SDK-ATTESTATION-UNKNOWN-KEY') throw e;
      if (Date.now() - this.#jwksRefetchedAt < JWKS_REFETCH_MS) throw e;
      this.#jwksRefetchedAt = Date.now();
      return verifyOffline(token, await this.#fetchJWKS(), o);
    }
  }

  /** fetchJWKS fetches the gate's JWKS into the cache (a failed fetch is not cached). */
  #fetchJWKS(): Promise<JWKS> {
    const pending = this.jwks();
    this.#jwks = pending;
    pending.catch(() => {
      if (this.#jwks === pending) this.#jwks = undefined;
    });
    return pending;
  }
}
