/**
 * The MCP server: agentgate's verify (QWED-Agent spec v1.1 §4), tool check
 * (§5), approval status and A2A intercept (QWED A2A) as MCP tools. Each tool
 * validates its arguments (zod schemas, the gate's own bounds), makes one
 * call through @agentgate/sdk and answers:
 *
 * - a decision or verdict (APPROVED, DENIED, PENDING, …; forwarded, blocked,
 *   …) as a result: a one-line summary with the gate's code and reason, then
 *   the gate's JSON, also as structuredContent;
 * - a failed request as a tool error (isError): "<code>: <message>" and
 *   structuredContent {error: {code, message, status, details}}.
 *
 * The credentials live in the client; no answer, error or log line carries
 * them.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { QWEDError, type QWEDClient } from '@agentgate/sdk';
import { z } from 'zod';

/** The package's version, reported to MCP clients. */
export const VERSION = '0.1.0';

/** Bounds of the tools' arguments: the gate's own (README "Limits"), checked before a request is sent. */
export const LIMITS = {
  /** identifiers: agent, conversation, approval ids, tool names, action types */
  id: 256,
  /** free texts: justification, user_intent, target */
  text: 4096,
  /** an action's query or code */
  query: 100_000,
  /** an action's or tool call's parameters, as JSON text */
  parametersBytes: 64 * 1024,
  /** an A2A message's payload, as JSON text */
  payloadBytes: 1024 * 1024,
  /** nesting of parameters and payloads */
  depth: 64,
  /** an A2A trace_id / timestamp */
  traceId: 128,
  timestamp: 64,
  /** agents whose generated conversation this server remembers */
  conversations: 1024,
  /** values (members and items, counted by the MCP SDK) in one tool call's arguments, before the schema is checked */
  elements: 100_000,
} as const;

/** The hints of the tools whose calls the gate decides and records. */
const RECORDED = { readOnlyHint: false, idempotentHint: false, openWorldHint: false };

const utf8 = new TextEncoder();

/** jsonProblem returns why v cannot be sent as a bounded JSON object, or undefined when it can. */
function jsonProblem(v: unknown, maxBytes: number): string | undefined {
  // depth first, iteratively: JSON.stringify recurses and would overflow first
  const stack: Array<[unknown, number]> = [[v, 1]];
  while (stack.length > 0) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (d > LIMITS.depth) return `nested deeper than ${LIMITS.depth} levels`;
    for (const c of Object.values(x as Record<string, unknown>)) stack.push([c, d + 1]);
  }
  const bytes = utf8.encode(JSON.stringify(v)).length;
  return bytes > maxBytes ? `${bytes} bytes of JSON, over ${maxBytes}` : undefined;
}

const jsonObject = (maxBytes: number, what: string) =>
  z.record(z.string(), z.unknown()).superRefine((v, ctx) => {
    const p = jsonProblem(v, maxBytes);
    if (p) ctx.addIssue({ code: 'custom', message: `${what}: ${p}` });
  });

const id = (what: string) => z.string().min(1).max(LIMITS.id).describe(what);

const contextSchema = z.object({
  conversation_id: id('the conversation the action belongs to'),
  step_number: z.number().int().min(1).max(1_000_000).describe('the step within the conversation, increasing'),
  user_intent: z.string().max(LIMITS.text).optional(),
}).strict().describe('the action context (QWED-Agent spec v1.1 §4.1); omitted: this server\'s conversation for the agent and its next step');

const inputs = {
  verify_action: z.object({
    agent_id: id('the agent (agent_…)'),
    action: z.object({
      type: id('the action type, e.g. execute_sql, calculate, send_email'),
      query: z.string().max(LIMITS.query).optional().describe('the SQL or expression to verify'),
      code: z.string().max(LIMITS.query).optional().describe('code to verify'),
      target: z.string().max(LIMITS.text).optional(),
      parameters: jsonObject(LIMITS.parametersBytes, 'action.parameters').optional(),
      estimated_cost_usd: z.number().min(0).max(1e9).optional(),
      estimated_tokens: z.number().int().min(0).max(1e12).optional(),
    }).strict(),
    context: contextSchema.optional(),
    require_attestation: z.boolean().optional().describe('ask for a signed attestation of the decision'),
  }).strict(),
  verify_tool_call: z.object({
    agent_id: id('the agent (agent_…)'),
    tool_name: id('the tool to call'),
    parameters: jsonObject(LIMITS.parametersBytes, 'parameters').optional().describe('the tool call\'s arguments'),
    justification: z.string().max(LIMITS.text).optional().describe('why the call is needed, shown to an approver'),
  }).strict(),
  get_approval: z.object({
    approval_id: id('the approval (a PENDING decision\'s approval.approval_id)'),
  }).strict(),
  a2a_intercept: z.object({
    sender_agent_id: id('the sending agent'),
    receiver_agent_id: id('the receiving agent'),
    payload_type: z.enum(['financial_transaction', 'logic_assertion', 'code_execution', 'data_query', 'general'])
      .describe('selects the guard: finance_guard, logic_guard, code_guard; data_query and general pass through'),
    payload: jsonObject(LIMITS.payloadBytes, 'payload').describe('the message\'s payload, e.g. {"data": {"claimed_total": …, "line_items": […]}}'),
    trace_id: z.string().min(1).max(LIMITS.traceId).regex(/^[\x21-\x7e]+$/, 'printable ASCII').optional(),
    timestamp: z.string().max(LIMITS.timestamp).optional().describe('RFC 3339'),
  }).strict(),
};

/** Options of createServer. */
export interface ServerOptions {
  /** The gate's client, holding the credentials (AGENTGATE_API_KEY, AGENTGATE_AGENT_TOKEN). */
  client: QWEDClient;
  /** The conversation id prefix of generated contexts (default: mcp_ and a random suffix per server). */
  conversationPrefix?: string;
}

type Json = Record<string, unknown>;

function result(summary: string, body: Json): CallToolResult {
  return { content: [{ type: 'text', text: `${summary}\n${JSON.stringify(body)}` }], structuredContent: body };
}

/** failure renders a failed call as a tool error: the gate's code and message, never a credential. */
function failure(err: unknown): CallToolResult {
  let error: Json;
  if (err instanceof QWEDError) {
    error = { code: err.code, message: err.message, status: err.status, details: err.details };
  } else {
    error = { code: 'QWED-SDK-ERROR', message: 'the call failed inside the MCP server', status: 0, details: {} };
  }
  return { isError: true, content: [{ type: 'text', text: `${String(error.code)}: ${String(error.message)}` }], structuredContent: { error } };
}

function decisionSummary(r: Json): string {
  const e = r.error as { code?: string; message?: string } | undefined;
  const parts = [String(r.decision ?? 'UNKNOWN')];
  const a = r.approval as { approval_id?: string; summary?: string } | undefined;
  if (r.decision === 'PENDING' && a?.approval_id) {
    // A PENDING reply carries QWED-AGENT-TRUST-002, whose message repeats the approval's summary:
    // the approval to poll comes first, the code after it.
    parts.push(`approval ${a.approval_id} awaits a human (get_approval)${a.summary ? `: ${a.summary}` : ''}`);
    if (e?.code) parts.push(`(${e.code})`);
  } else if (e?.code) {
    parts.push(`${e.code}: ${e.message ?? ''}`);
  }
  const c = r.corrected_action as { query?: string; code?: string } | undefined;
  const fix = c?.query ?? c?.code;
  if (r.decision === 'CORRECTED' && typeof fix === 'string') parts[0] += `: take corrected_action instead: ${fix.length > 300 ? `${fix.slice(0, 300)}…` : fix}`;
  return parts.join(' ');
}

function verdictSummary(r: Json): string {
  return `${String(r.status ?? 'unknown')}${r.engine_used ? ` by ${String(r.engine_used)}` : ''}${r.reason ? `: ${String(r.reason)}` : ''}`;
}

async function run(fn: () => Promise<unknown>, summary: (r: Json) => string): Promise<CallToolResult> {
  try {
    const r = (await fn()) as Json;
    return result(summary(r), r);
  } catch (err) {
    return failure(err);
  }
}

/**
 * createServer builds the MCP server and registers its four tools. Connect it
 * to a transport (StdioServerTransport in the agentgate-mcp executable).
 */
export function createServer(options: ServerOptions): McpServer {
  const client = options.client;
  const prefix = options.conversationPrefix ?? `mcp_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;
  // Generated contexts: one conversation per agent for this server's life,
  // its steps increasing. Past LIMITS.conversations agents the oldest is
  // forgotten; if it comes back it gets a new conversation (a reused one
  // would replay step 1: QWED-AGENT-LOOP-002).
  const conversations = new Map<string, { id: string; step: number }>();
  let generation = 0;
  const nextContext = (agentId: string) => {
    let c = conversations.get(agentId);
    if (c === undefined) {
      if (conversations.size >= LIMITS.conversations) conversations.delete(conversations.keys().next().value as string);
      c = { id: `${prefix}_${++generation}`, step: 0 };
    } else {
      conversations.delete(agentId);
    }
    conversations.set(agentId, c);
    c.step += 1;
    return { conversation_id: c.id, step_number: c.step };
  };

  const server = new McpServer({ name: 'agentgate', version: VERSION }, { maxToolInputElements: LIMITS.elements });

  server.registerTool('verify_action', {
    title: 'Verify an action',
    description: 'Ask agentgate whether an agent may take an action (QWED-Agent spec v1.1 §4) before taking it. '
      + 'The answer is a decision: APPROVED (go ahead), CORRECTED (take corrected_action instead), DENIED, PENDING (a human must approve: '
      + 'poll get_approval) or BUDGET_EXCEEDED, with the gate\'s error code and reason. The call is recorded and counts against the agent\'s budget.',
    inputSchema: inputs.verify_action,
    annotations: RECORDED,
  }, async (a, extra) => run(() => client.verifyAction({
    signal: extra.signal,
    agentId: a.agent_id,
    action: a.action,
    context: a.context ?? nextContext(a.agent_id),
    ...(a.require_attestation === undefined ? {} : { options: { require_attestation: a.require_attestation } }),
  }), decisionSummary));

  server.registerTool('verify_tool_call', {
    title: 'Check a tool call',
    description: 'Ask agentgate whether an agent may call a tool with these parameters (QWED-Agent spec v1.1 §5) before calling it. '
      + 'APPROVED: call it; DENIED (e.g. QWED-AGENT-004 blocked tool, QWED-AGENT-TRUST-001 insufficient trust): do not; '
      + 'PENDING: a human must approve first (poll get_approval with the approval id).',
    inputSchema: inputs.verify_tool_call,
    annotations: RECORDED,
  }, async (a, extra) => run(() => client.verifyToolCall({
    signal: extra.signal,
    agentId: a.agent_id,
    toolName: a.tool_name,
    parameters: a.parameters ?? {},
    ...(a.justification === undefined ? {} : { justification: a.justification }),
  }), decisionSummary));

  server.registerTool('get_approval', {
    title: 'Approval status',
    description: 'Read an approval of agentgate: status pending, approved, denied or expired, with its summary and the approver\'s reason.',
    inputSchema: inputs.get_approval,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  }, async (a, extra) => run(() => client.getApproval(a.approval_id, { signal: extra.signal }), (r) => `approval ${String(r.approval_id ?? a.approval_id)}: ${String(r.status ?? 'unknown')}`));

  server.registerTool('a2a_intercept', {
    title: 'Verify an agent-to-agent message',
    description: 'Send one agent-to-agent message through agentgate\'s interceptor (QWED A2A, POST /a2a/intercept): the trust boundary '
      + 'and the guard of its payload_type decide. The verdict: forwarded (deliver it; attestation_jwt signs the verdict), blocked '
      + '(do not deliver: reason says why), rate_limited or error.',
    inputSchema: inputs.a2a_intercept,
    annotations: RECORDED,
  }, async (a, extra) => run(() => client.a2aIntercept({
    sender_agent_id: a.sender_agent_id,
    receiver_agent_id: a.receiver_agent_id,
    payload_type: a.payload_type,
    payload: a.payload,
    ...(a.trace_id === undefined ? {} : { trace_id: a.trace_id }),
    ...(a.timestamp === undefined ? {} : { timestamp: a.timestamp }),
  }, { signal: extra.signal }), verdictSummary));

  return server;
}
