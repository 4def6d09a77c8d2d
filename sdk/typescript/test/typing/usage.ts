// Compiled (never run) by test/types.test.mjs against dist/*.d.ts: the README's quick start and the
// documented call shapes type-check, and misuse does not.
import {
  QWEDAgentClient, QWEDClient, QWEDError, RateLimitError, verifyAttestation,
  type Budget, type DecisionReply, type Decision, type Responses,
} from '../../dist/index.js';

declare const process: { env: Record<string, string | undefined> };
declare function executeQuery(q: string): void;

export async function quickStart(): Promise<void> {
  // The README's quick start, as written there.
  const agent = await QWEDAgentClient.register({
    apiKey: process.env.QWED_API_KEY, principalId: 'org_123', name: 'MyAgent',
    permissions: { allowed_engines: ['math', 'sql'] }, budget: { max_daily_cost_usd: 50 },
  });
  const result = await agent.verifyAction({ type: 'execute_sql', query: 'SELECT id FROM orders' });
  if (result.decision === 'APPROVED') {
    executeQuery(result.verified_query ?? '');
    await agent.logExecution({ actionId: result.action_id, success: true, attestation: result.attestation });
  }
}

export async function shapes(client: QWEDClient): Promise<void> {
  const d: DecisionReply = await client.verifyAction({ agentId: 'agent_1', action: { type: 'calculate', query: '2+2' }, context: { conversation_id: 'c', step_number: 1 } });
  const decision: Decision = d.decision;
  const budget: Budget = await client.getAgentBudget('agent_1');
  const activity: Responses['getAgentActivity'] & Iterable<unknown> = await client.getAgentActivity('agent_1', { limit: 10, afterSeq: 3 });
  for (const entry of await client.getAgentActivity('agent_1')) { const dec: Decision = entry.decision; void dec; }
  for await (const entry of client.iterateAgentActivity('agent_1', { limit: 100 })) void entry.activity_id;
  for await (const a of client.iterateApprovals({ status: 'pending' })) void a.approval_id;
  const csv: string = await client.exportComplianceReport('agent_1', { format: 'csv' });
  const pdf: Uint8Array = await client.exportComplianceReport('agent_1', { format: 'pdf' });
  const tool = await client.verifyToolCall({ agentId: 'agent_1', toolName: 'send_email', parameters: { to: 'x' }, signal: AbortSignal.timeout(1000) });
  const approval = await client.getApproval(tool.approval?.approval_id ?? '');
  const verdict = await client.a2aIntercept({ sender_agent_id: 'a', receiver_agent_id: 'b', payload: {} });
  const claims = await verifyAttestation(verdict.attestation_jwt, await client.jwks(), { kind: 'a2a' });
  void [decision, budget, activity, csv, pdf, approval, claims];
  try {
    await client.getAgent('agent_1');
  } catch (e) {
    if (e instanceof RateLimitError) { const s: number | undefined = e.retryAfter; void s; }
    if (e instanceof QWEDError) { const c: string = e.code; const st: number = e.status; void [c, st]; }
  }
  // @ts-expect-error an action is required
  await client.verifyAction({ agentId: 'agent_1', context: { conversation_id: 'c', step_number: 1 } });
  // @ts-expect-error a decision is one of the five
  const bad: Decision = 'MAYBE';
  void bad;
  // @ts-expect-error the format is json, csv or pdf
  await client.exportComplianceReport('agent_1', { format: 'xml' });
}
