/**
 * The check both integrations run before a tool executes: the tool call is
 * sent to the gate (POST /agents/{id}/tools/{tool}, QWED-Agent spec v1.1 §5)
 * and only an APPROVED decision lets the tool run. Every other outcome throws:
 * a decision other than APPROVED as a ToolCallRefusedError carrying the
 * gate's code and reason, a failed request as the SDK's QWEDError (so a gate
 * that cannot be reached never lets a tool through: fail closed).
 */
import type { QWEDClient } from '@agentgate/sdk';

/** The decisions of QWED-Agent spec v1.1 §4.2. */
export type Decision = 'APPROVED' | 'DENIED' | 'CORRECTED' | 'PENDING' | 'BUDGET_EXCEEDED';

/**
 * The code of a PENDING refusal (QWED-Agent spec v1.1 Appendix A, "Action
 * requires approval"): a call refused at once, or whose approval was denied,
 * expired or still pending when approvalWaitMs ran out.
 */
export const APPROVAL_REQUIRED = 'QWED-AGENT-TRUST-002';

/** Options shared by the LangChain handler and the AI SDK wrapper. */
export interface ToolGateOptions {
  /** The gate's client, holding the agent's token (or its principal's key). */
  client: QWEDClient;
  /** The agent whose tool calls are verified. */
  agentId: string;
  /** A justification sent with every tool call (at most 4 KiB), shown to the approver of a PENDING call. */
  justification?: string;
  /**
   * How long a PENDING call waits for a human to approve it, in milliseconds:
   * the approval is polled (GET /approvals/{id}) until it is approved (the tool
   * runs), denied or expired (refused). 0, the default: a PENDING call is
   * refused at once, the error naming its approval id.
   */
  approvalWaitMs?: number;
  /** How often a waiting PENDING call polls its approval, in milliseconds (default 1000). */
  approvalPollMs?: number;
}

/** The parts of a decision reply the integrations read (the gate sends more). */
export interface ToolDecision {
  action_id?: string;
  decision: Decision | string;
  tool_name?: string;
  error?: { code: string; message: string; details?: Record<string, unknown> };
  approval?: { approval_id: string; status: string; summary?: string; reason?: string };
  [member: string]: unknown;
}

/** The fields of a ToolCallRefusedError. */
export interface ToolCallRefusal {
  toolName: string;
  decision: string;
  code: string;
  reason: string;
  actionId?: string;
  approvalId?: string;
  details?: Record<string, unknown>;
  reply: ToolDecision;
}

/**
 * ToolCallRefusedError: the gate did not approve a tool call, so the tool did
 * not run. code is the gate's error code (QWED-AGENT-004 for a blocked tool,
 * QWED-AGENT-TRUST-001, QWED-AGENT-BUDGET-00x, …; QWED-AGENT-TRUST-002 for a
 * call awaiting approval), reason the gate's message, reply its whole answer.
 */
export class ToolCallRefusedError extends Error {
  readonly toolName: string;
  readonly decision: string;
  readonly code: string;
  readonly reason: string;
  readonly actionId: string | undefined;
  readonly approvalId: string | undefined;
  readonly details: Record<string, unknown>;
  readonly reply: ToolDecision;

  constructor(r: ToolCallRefusal) {
    super(`agentgate refused tool '${r.toolName}': ${r.decision} ${r.code}: ${r.reason}`);
    this.name = 'ToolCallRefusedError';
    this.toolName = r.toolName;
    this.decision = r.decision;
    this.code = r.code;
    this.reason = r.reason;
    this.actionId = r.actionId;
    this.approvalId = r.approvalId;
    this.details = r.details ?? {};
    this.reply = r.reply;
  }

  /** toJSON renders the refusal (no credential is ever part of it). */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name, toolName: this.toolName, decision: this.decision, code: this.code, reason: this.reason,
      actionId: this.actionId, approvalId: this.approvalId, details: this.details,
    };
  }
}

/** toolParameters turns a tool's input into the gate's tool_call.parameters: objects as they are, anything else as {input}. */
export function toolParameters(input: unknown): Record<string, unknown> {
  if (typeof input === 'string') {
    try {
      const v: unknown = JSON.parse(input);
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // a plain string input: sent as {input}
    }
    return { input };
  }
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) return input as Record<string, unknown>;
  return input === undefined ? {} : { input };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function refusal(toolName: string, reply: ToolDecision): ToolCallRefusedError {
  const approvalId = reply.approval?.approval_id;
  let code = reply.error?.code;
  let reason = reply.error?.message;
  if (code === undefined && reply.decision === 'PENDING') {
    code = APPROVAL_REQUIRED;
    reason = `awaiting approval ${approvalId ?? '(no id)'}${reply.approval?.summary ? `: ${reply.approval.summary}` : ''}`;
  }
  return new ToolCallRefusedError({
    toolName,
    decision: String(reply.decision),
    code: code ?? 'QWED-AGENT-005',
    reason: reason ?? `decision ${String(reply.decision)}`,
    actionId: reply.action_id,
    approvalId,
    details: reply.error?.details,
    reply,
  });
}

/**
 * waitForApproval polls a PENDING call's approval until it is resolved or
 * waitMs passes; it returns when approved and throws a refusal otherwise.
 */
async function waitForApproval(o: ToolGateOptions, toolName: string, reply: ToolDecision, signal?: AbortSignal): Promise<void> {
  const id = reply.approval?.approval_id;
  const waitMs = o.approvalWaitMs ?? 0;
  if (id === undefined || waitMs <= 0) throw refusal(toolName, reply);
  const pollMs = Math.max(10, o.approvalPollMs ?? 1000);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const a = await o.client.getApproval(id, { signal });
    if (a.status === 'approved') return;
    if (a.status !== 'pending') {
      throw new ToolCallRefusedError({
        toolName, decision: 'PENDING', code: APPROVAL_REQUIRED,
        reason: `approval ${id} was ${a.status}${a.reason ? `: ${a.reason}` : ''}`,
        actionId: reply.action_id, approvalId: id, reply,
      });
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new ToolCallRefusedError({
        toolName, decision: 'PENDING', code: APPROVAL_REQUIRED,
        reason: `approval ${id} still pending after ${waitMs} ms`, actionId: reply.action_id, approvalId: id, reply,
      });
    }
    await sleep(Math.min(pollMs, left), signal);
  }
}

/**
 * verifyToolCall asks the gate about one tool call and returns its APPROVED
 * decision; it throws ToolCallRefusedError for any other decision (after
 * waiting for a PENDING approval when approvalWaitMs allows) and the SDK's
 * QWEDError when the request fails.
 */
export async function verifyToolCall(o: ToolGateOptions, toolName: string, input: unknown, signal?: AbortSignal): Promise<ToolDecision> {
  const reply = (await o.client.verifyToolCall({
    agentId: o.agentId,
    toolName,
    parameters: toolParameters(input),
    ...(o.justification === undefined ? {} : { justification: o.justification }),
    ...(signal === undefined ? {} : { signal }),
  })) as unknown as ToolDecision;
  if (reply.decision === 'APPROVED') return reply;
  if (reply.decision === 'PENDING') {
    await waitForApproval(o, toolName, reply, signal);
    return reply;
  }
  throw refusal(toolName, reply);
}
