/**
 * QWEDAgentClient: a client bound to one agent (QWED-Agent spec v1.1 §9.1,
 * "SDK Integration"): it holds the agent's id and token, and generates the
 * action context (a conversation id and increasing step numbers) when a call
 * does not pass one, so that the spec's one-argument verifyAction works.
 */
import { QWEDClient, type ActivityPage, type ActivityQuery, type ClientOptions, type LogExecutionParams, type Params, type RegisterAgentParams, type Registration, type ClientVerifyAttestationOptions } from './client.js';
import { newIdempotencyKey, type RequestOptions } from './transport.js';
import type { AttestationClaims } from './attestation.js';
import type * as T from './types.gen.js';

type R = T.Responses;

/** The decision of an agent's verifyAction, with the query it may run. */
export type AgentDecision = T.DecisionReply & {
  /**
   * The query to execute: the corrected action's when the decision is
   * CORRECTED, the action's own when APPROVED; absent otherwise.
   */
  verified_query?: string;
};

/** Options of QWEDAgentClient.register: the agent's registration and the client's options. */
export type AgentRegisterOptions = RegisterAgentParams & ClientOptions & { conversationId?: string };

/** Options of a QWEDAgentClient made for an agent already registered (it holds no API key). */
export interface AgentClientOptions extends Omit<ClientOptions, 'apiKey'> {
  agentId: string;
  agentToken: string;
  /** The conversation of generated contexts (default: a fresh random id). */
  conversationId?: string;
  /** The last step already committed in that conversation (default 0). */
  lastStep?: number;
}

/** The decisions that commit their step (QWED-Agent spec v1.1 §9.2: denied actions do not). */
function commits(d: T.DecisionReply): boolean {
  return d.decision !== 'DENIED' && d.decision !== 'BUDGET_EXCEEDED';
}

/**
 * QWEDAgentClient makes the calls of one agent with its token, and only with
 * it: it holds no API key (register uses the key for the registration alone).
 */
export class QWEDAgentClient extends QWEDClient {
  /** The agent. */
  readonly agentId: string;
  /** The registration answer (without the token), when this client registered the agent. */
  readonly registration: Omit<Registration, 'agent_token'> | undefined;
  #conversationId: string;
  #lastStep: number;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: AgentClientOptions, registration?: Omit<Registration, 'agent_token'>) {
    if (!options.agentId) throw new TypeError('agentId is required');
    if (!options.agentToken) throw new TypeError('agentToken is required');
    super({ ...options, apiKey: undefined } as ClientOptions, { keyFromEnv: false });
    this.agentId = options.agentId;
    this.registration = registration;
    this.#conversationId = options.conversationId ?? `conv_${newIdempotencyKey().replace(/-/g, '')}`;
    this.#lastStep = options.lastStep ?? 0;
  }

  /**
   * register registers an agent with a principal's API key and returns a
   * client bound to it (QWED-Agent spec v1.1 §9.1). The agent's type
   * defaults to "supervised" (the spec's example names none; the gate
   * requires one). When the registration's answer carries no token (it was
   * lost and the retry was answered from the log), the key rotates one in.
   */
  static async register(o: AgentRegisterOptions & RequestOptions): Promise<QWEDAgentClient> {
    const admin = new QWEDClient(o);
    const reg = await admin.registerAgent({ ...o, type: o.type ?? 'supervised' });
    const { agent_token: minted, ...rest } = reg;
    // A registration answered from the log (its first answer was lost and the retry replayed it)
    // carries no token: the gate sends a secret once. The principal's key then rotates one in.
    const token = minted ?? (await admin.rotateToken({ agentId: reg.agent_id, ...(o.signal ? { signal: o.signal } : {}) })).agent_token;
    if (!token) throw new TypeError(`the gate returned no token for agent ${reg.agent_id}`);
    const { apiKey: _key, ...clientOptions } = o;
    return new QWEDAgentClient({ ...clientOptions, agentId: reg.agent_id, agentToken: token }, rest);
  }

  /** toJSON renders the client (its agent and conversation) without its token. */
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), agentId: this.agentId, conversationId: this.#conversationId };
  }

  /** conversationId is the conversation of generated contexts. */
  get conversationId(): string {
    return this.#conversationId;
  }

  /** lastStep is the last step this client saw committed in that conversation. */
  get lastStep(): number {
    return this.#lastStep;
  }

  /** newConversation starts a new conversation for generated contexts (each allows 50 steps) and returns its id. */
  newConversation(conversationId?: string): string {
    this.#conversationId = conversationId ?? `conv_${newIdempotencyKey().replace(/-/g, '')}`;
    this.#lastStep = 0;
    return this.#conversationId;
  }

  /**
   * verifyAction asks the gate before an action runs. Without a context the
   * client's conversation and its next step are used: such calls run one at
   * a time, a denied step is reused by the next call (denials do not commit
   * it), and a replay refusal (LOOP-002, the step was committed by a call
   * whose answer was lost) moves past the committed step and asks once more.
   */
  override verifyAction(action: T.Action, context?: T.ActionContext, options?: Params<{ options?: T.Options }>): Promise<AgentDecision>;
  /** verifyAction in the QWEDClient form (agentId is this agent). */
  override verifyAction(p: Params<{ agentId?: string; action: T.Action; context?: T.ActionContext; options?: T.Options }>): Promise<AgentDecision>;
  override verifyAction(a: T.Action | Params<{ action: T.Action; context?: T.ActionContext; options?: T.Options }>, context?: T.ActionContext, extra?: Params<{ options?: T.Options }>): Promise<AgentDecision> {
    const bag = a as Params<{ agentId?: string; action: T.Action; context?: T.ActionContext; options?: T.Options }>;
    const isBag = context === undefined && extra === undefined && bag && typeof bag === 'object' && 'action' in bag && typeof bag.action === 'object' && bag.action !== null;
    const action = isBag ? bag.action : (a as T.Action);
    const ctx = isBag ? bag.context : context;
    const p: Params<{ options?: T.Options }> = isBag ? bag : (extra ?? {});
    if (isBag && bag.agentId !== undefined && bag.agentId !== this.agentId) throw new TypeError(`this client is bound to agent ${this.agentId}, not ${bag.agentId}`);
    if (ctx) return this.#verify(action, ctx, p);
    const run = this.#queue.then(() => this.#generated(action, p));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #generated(action: T.Action, p: Params<{ options?: T.Options }>): Promise<AgentDecision> {
    const conv = this.#conversationId;
    let step = this.#lastStep + 1;
    let d = await this.#verify(action, { conversation_id: conv, step_number: step }, p);
    const last = d.error?.code === 'QWED-AGENT-LOOP-002' ? (d.error.details as { last_step?: unknown } | undefined)?.last_step : undefined;
    if (typeof last === 'number' && last >= step && conv === this.#conversationId) {
      this.#lastStep = last;
      step = last + 1;
      const { idempotencyKey: _k, ...again } = p;
      d = await this.#verify(action, { conversation_id: conv, step_number: step }, again);
    }
    if (commits(d) && conv === this.#conversationId && step > this.#lastStep) this.#lastStep = step;
    return d;
  }

  async #verify(action: T.Action, context: T.ActionContext, p: Params<{ options?: T.Options }>): Promise<AgentDecision> {
    const d: AgentDecision = await super.verifyAction({ ...p, agentId: this.agentId, action, context });
    const q = d.decision === 'CORRECTED' ? (d.corrected_action?.query ?? action.query) : d.decision === 'APPROVED' ? action.query : undefined;
    if (typeof q === 'string') d.verified_query = q;
    return d;
  }

  /** verifyToolCall asks the gate before this agent's tool runs. */
  override verifyToolCall(p: Params<{ agentId?: string; toolName: string; parameters?: unknown; context?: T.ActionContext; justification?: string; estimatedCostUsd?: T.USD; estimatedTokens?: number; options?: T.Options }>): Promise<T.DecisionReply> {
    return super.verifyToolCall({ ...p, agentId: this.#own(p.agentId) });
  }

  /** logExecution records what this agent's approved action cost; an attestation given is checked offline first. */
  override logExecution(p: Params<Omit<LogExecutionParams, 'agentId'> & { agentId?: string }>): Promise<T.ExecutionReply> {
    return super.logExecution({ ...p, agentId: this.#own(p.agentId) });
  }

  /** requestTrust asks for this agent's trust elevation. */
  override requestTrust(p: Params<{ agentId?: string; toLevel: T.TrustLevel; fromLevel?: T.TrustLevel; justification?: string; evidence?: T.TrustEvidence; request?: string }>): Promise<R['requestTrust']> {
    return super.requestTrust({ ...p, agentId: this.#own(p.agentId) });
  }

  /** rotateToken replaces this agent's token; the client uses the new one from then on. */
  override async rotateToken(p: Params<{ agentId?: string }> = {}): Promise<R['rotateToken']> {
    const r = await super.rotateToken({ ...p, agentId: this.#own(p.agentId) });
    if (typeof r.agent_token === 'string') this.transport.setAgentToken(r.agent_token);
    return r;
  }

  /** getAgent reads this agent (or another, by id). */
  override getAgent(agentId: string = this.agentId, p?: RequestOptions): Promise<R['getAgent']> {
    return super.getAgent(agentId, p);
  }

  /** getAgentBudget reads this agent's budget (or another's, by id). */
  override getAgentBudget(agentId: string = this.agentId, p?: RequestOptions): Promise<R['getAgentBudget']> {
    return super.getAgentBudget(agentId, p);
  }

  /** getAgentActivity reads this agent's activity (or another's, by id). */
  override getAgentActivity(agentId: string = this.agentId, p?: Params<ActivityQuery>): Promise<ActivityPage> {
    return super.getAgentActivity(agentId, p);
  }

  /** getAgentState reads this agent's state (or another's, by id). */
  override getAgentState(agentId: string = this.agentId, p?: Params<T.Queries['getAgentState']>): Promise<R['getAgentState']> {
    return super.getAgentState(agentId, p);
  }

  /** getBudget reads this agent's budget and its use (QWED-Agent spec v1.1 §6.1). */
  getBudget(p?: RequestOptions): Promise<R['getAgentBudget']> {
    return super.getAgentBudget(this.agentId, p);
  }

  /** getActivity reads a page of this agent's activity log (§7.2), iterable over its entries. */
  getActivity(p?: Params<ActivityQuery>): Promise<ActivityPage> {
    return super.getAgentActivity(this.agentId, p);
  }

  /** getState reads this agent's state at a log position or a time (atSeq or atTime). */
  getState(p?: Params<T.Queries['getAgentState']>): Promise<R['getAgentState']> {
    return super.getAgentState(this.agentId, p);
  }

  /** verifyAttestation checks an attestation offline against the gate's JWKS. */
  override verifyAttestation(token: string, options?: ClientVerifyAttestationOptions): Promise<AttestationClaims> {
    return super.verifyAttestation(token, options);
  }

  #own(agentId: string | undefined): string {
    if (agentId !== undefined && agentId !== this.agentId) throw new TypeError(`this client is bound to agent ${this.agentId}, not ${agentId}`);
    return this.agentId;
  }
}
