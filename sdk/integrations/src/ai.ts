/**
 * Vercel AI SDK: wrappers that put agentgate in front of a tool's execute.
 * The wrapped execute sends the call to the gate first and runs the original
 * only when the gate APPROVES it; otherwise it throws a ToolCallRefusedError
 * (the AI SDK reports it as the call's tool-error, with the gate's code and
 * reason), so a refused tool never runs.
 *
 * ```ts
 * const tools = gateTools({ search_db: tool({ description, inputSchema, execute }) }, { client, agentId });
 * await generateText({ model, tools, prompt });
 * ```
 */
import type { Tool, ToolExecutionOptions } from 'ai';
import { verifyToolCall, type ToolGateOptions } from './gate.js';

export { ToolCallRefusedError, APPROVAL_REQUIRED, type ToolGateOptions, type ToolDecision } from './gate.js';

type Execute = (input: unknown, options: ToolExecutionOptions) => unknown;

/**
 * gateTool returns a copy of tool whose execute is verified by the gate under
 * toolName (the key the tool has in the tools record the model sees). A tool
 * without execute (one the application runs itself) is returned unchanged:
 * the AI SDK never executes it. A streaming execute (an async generator) stays
 * one: the gate is asked before its first value.
 */
export function gateTool<T extends Tool>(toolName: string, tool: T, options: ToolGateOptions): T {
  if (typeof toolName !== 'string' || toolName === '') throw new TypeError('gateTool: toolName is required');
  if (!options?.client || typeof options.agentId !== 'string' || options.agentId === '') {
    throw new TypeError('gateTool: options.client and options.agentId are required');
  }
  const execute = (tool as { execute?: Execute }).execute;
  if (typeof execute !== 'function') return tool;
  const o: ToolGateOptions = { ...options };
  const streaming = Object.prototype.toString.call(execute) === '[object AsyncGeneratorFunction]';
  const gated: Execute = streaming
    ? async function* (input, execOptions) {
      await verifyToolCall(o, toolName, input, execOptions?.abortSignal);
      yield* execute.call(tool, input, execOptions) as AsyncIterable<unknown>;
    }
    : async (input, execOptions) => {
      await verifyToolCall(o, toolName, input, execOptions?.abortSignal);
      return execute.call(tool, input, execOptions);
    };
  return { ...tool, execute: gated } as T;
}

/** gateTools wraps every tool of a tools record with gateTool, each under its key. */
export function gateTools<TOOLS extends Record<string, Tool>>(tools: TOOLS, options: ToolGateOptions): TOOLS {
  const out: Record<string, Tool> = {};
  for (const [name, t] of Object.entries(tools)) out[name] = gateTool(name, t, options);
  return out as TOOLS;
}
