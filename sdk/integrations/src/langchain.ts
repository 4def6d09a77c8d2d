/**
 * LangChain.js: a callback handler that puts agentgate in front of every tool
 * a LangChain runnable calls. handleToolStart sends the call to the gate and
 * throws unless it is APPROVED; the handler is awaited and raises its errors
 * (awaitHandlers, raiseError), so a refused tool never runs and the caller
 * gets a ToolCallRefusedError carrying the gate's code and reason.
 *
 * ```ts
 * const gate = new QWEDVerificationCallback({ client, agentId });
 * await myTool.invoke(args, { callbacks: [gate] });
 * ```
 */
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Serialized } from '@langchain/core/load/serializable';
import { verifyToolCall, type ToolDecision, type ToolGateOptions } from './gate.js';

export { ToolCallRefusedError, APPROVAL_REQUIRED, type ToolGateOptions, type ToolDecision } from './gate.js';

/** toolNameOf: the tool's name as LangChain reports it (the run name, else the serialized name or class). */
function toolNameOf(tool: Serialized, runName: string | undefined): string {
  if (runName) return runName;
  const named = (tool as { name?: unknown }).name;
  if (typeof named === 'string' && named !== '') return named;
  return tool.id[tool.id.length - 1] ?? 'unknown_tool';
}

/**
 * QWEDVerificationCallback verifies each tool call through the gate before the
 * tool runs (the TypeScript twin of qwed_sdk.langchain.QWEDVerificationCallback).
 * Pass it in a runnable's callbacks (they are inherited by the tools an agent
 * calls). lastDecision holds the latest APPROVED decision.
 */
export class QWEDVerificationCallback extends BaseCallbackHandler {
  name = 'QWEDVerificationCallback';
  override awaitHandlers = true;
  override raiseError = true;
  /** The latest APPROVED decision (the gate's reply), if any. */
  lastDecision: ToolDecision | undefined;
  readonly #options: ToolGateOptions;

  constructor(options: ToolGateOptions) {
    super({ raiseError: true });
    if (!options?.client || typeof options.agentId !== 'string' || options.agentId === '') {
      throw new TypeError('QWEDVerificationCallback: options.client and options.agentId are required');
    }
    this.#options = { ...options };
  }

  /** handleToolStart verifies the call; it throws (and so stops the tool) unless the gate approves it. */
  override async handleToolStart(
    tool: Serialized,
    input: string,
    _runId: string,
    _parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
  ): Promise<void> {
    this.lastDecision = await verifyToolCall(this.#options, toolNameOf(tool, runName), input);
  }
}
