/**
 * @agentgate/integrations: agentgate in front of the tools of agent
 * frameworks. Import the framework's entry point: `@agentgate/integrations/langchain`
 * (a LangChain.js callback handler) or `@agentgate/integrations/ai` (Vercel AI
 * SDK tool wrappers); this root exports only what both share, so importing it
 * loads neither framework.
 */
export { ToolCallRefusedError, APPROVAL_REQUIRED, toolParameters, verifyToolCall } from './gate.js';
export type { Decision, ToolDecision, ToolGateOptions, ToolCallRefusal } from './gate.js';
