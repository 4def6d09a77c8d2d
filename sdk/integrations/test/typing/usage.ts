// The packages' declarations as a user's TypeScript sees them: the README's
// call shapes type-check against dist/*.d.ts and the real frameworks' types;
// each @ts-expect-error line is a misuse that must not compile.
import { QWEDClient } from '@agentgate/sdk';
import { QWEDVerificationCallback, ToolCallRefusedError, type ToolDecision } from '@agentgate/integrations/langchain';
import { gateTool, gateTools } from '@agentgate/integrations/ai';
import { APPROVAL_REQUIRED, toolParameters } from '@agentgate/integrations';
import { tool as lcTool } from '@langchain/core/tools';
import type { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { tool } from 'ai';
import { z } from 'zod';

const client = new QWEDClient({ agentToken: 'qwed_agent_x' });

// LangChain.js: the handler is a BaseCallbackHandler, given in a runnable's callbacks
const handler = new QWEDVerificationCallback({ client, agentId: 'agent_1', approvalWaitMs: 60_000, approvalPollMs: 500, justification: 'why' });
export const asHandler: BaseCallbackHandler = handler;
const search = lcTool(async ({ q }) => `rows for ${q}`, { name: 'search_db', description: 'd', schema: z.object({ q: z.string() }) });
export const ran: Promise<string> = search.invoke({ q: 'orders' }, { callbacks: [handler] });
export const last: ToolDecision | undefined = handler.lastDecision;

// Vercel AI SDK: a wrapped tool keeps its exact type
const weather = tool({ description: 'd', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, tempC: 20 }) });
export const same: typeof weather = gateTool('weather', weather, { client, agentId: 'agent_1' });
export const record: { weather: typeof weather } = gateTools({ weather }, { client, agentId: 'agent_1' });

// the refusal's fields
export function describe(e: unknown): string {
  if (e instanceof ToolCallRefusedError) return `${e.decision} ${e.code} ${e.reason} ${e.approvalId ?? ''} ${e.reply.decision}`;
  return APPROVAL_REQUIRED + JSON.stringify(toolParameters('x'));
}

// @ts-expect-error the client is required
new QWEDVerificationCallback({ agentId: 'agent_1' });
// @ts-expect-error the agent is required
gateTools({ weather }, { client });
// @ts-expect-error a code is a string
export const n: number = new ToolCallRefusedError({ toolName: 't', decision: 'DENIED', code: 'QWED-AGENT-004', reason: 'r', reply: { decision: 'DENIED' } }).code;
