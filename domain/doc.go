// Package domain is agentgate's pure core: the commands an agent or a
// principal can send, the events that record their outcome, the state those
// events fold into, and the rules that decide.
//
// The shape follows etcd-io/raft: Decide takes the state, the command and an
// Env that carries everything from the outside world (the time, the log
// position, the signer), and returns the one Event that records the outcome.
// Apply folds an event into the state and cannot fail. Neither reads a clock,
// draws randomness, performs IO or depends on map iteration order; a test
// enforces the import list.
//
// A caller's obligations, in order:
//
//  1. Decode and authenticate the input into a Command (secrets are replaced
//     by their SHA-256 hashes before they reach this package).
//  2. Call Decide with an Env whose Now is never earlier than the last event
//     and whose Seq is the position the event will take in the log.
//  3. Append the returned Event to the log (the commit point).
//  4. Call Apply with the same event, then render the reply with Reply.
//
// Decide never mutates the state it is given; only Apply does. A batch of
// commands is decided by alternating Decide and Apply on the in-memory state
// before the batch is appended: if the append fails the caller must discard
// the in-memory state and rebuild it from the log.
//
// # Outcomes
//
// Every command yields one event, refusals included. Authentication
// failures (AGENT-001 unknown agent, AGENT-002 missing or wrong token,
// AUTH-001/AUTH-003 missing or wrong principal, AGENT-003 suspended) and
// invalid input (CTX-001, CTX-002, REQ-001, REQ-002, REQ-404, REQ-409) are
// EvCommandRejected: Apply records nothing for them but the time. Once
// Config.WithholdRefusals is on, an authentication failure records the
// command with its payload withheld (Withhold). A verify
// request that passes validation is decided (EvActionDecided) in this order:
// LOOP-001 step limit, LOOP-002 replay, LOOP-003 repetition, LOOP-004 doom
// loop, the action type or tool (REQ-005, AGENT-004, SEC-002, AGENT-005),
// trust × risk (TRUST-001 or PENDING), budgets (BUDGET-001/002/003),
// attestation (SYS-001 when it cannot be issued). Only APPROVED and PENDING
// consume the step and the budget; PENDING carries no error and opens an
// Approval.
//
// # Choices where the seeds leave room
//
//   - Fingerprints (QWED-Agent spec v1.1 §9.3) are SHA-256 of the RFC 8785 form of
//     {"action_type","code","parameters","query","target"} with every member
//     present: absent or empty strings and absent parameters are null. Tool
//     calls with a context use the same object with action_type "tool_call"
//     and target the tool name. The LOOP-004 state fingerprint hashes the
//     canonical object followed by pre_action_state_hash.
//   - A malformed pre_action_state_hash or state_source is REQ-001 naming the
//     field (the context is present but wrong); a missing one is CTX-001.
//     Parameters that are not deterministic JSON are REQ-001 naming
//     action.parameters, checked with the rest of the input before any rule.
//   - allowed_engines restricts the QWED engines (math, logic, sql, code);
//     the gate's own checks (tool, policy, security) are not engines.
//     blocked_tools applies to action types as well as tools (QWED-Agent spec v1.1 §3.1
//     blocks "database_write" and "file_delete").
//   - SQL injection patterns (the sql engine's findings) and blocked tools are security
//     violations: DENIED with SEC-002 or AGENT-004, status BLOCKED, trust -2.
//   - Unknown tools score 0.4 by default (the QWED-Agent user guide's 0.2 for my_custom_tool
//     is an example of a different heuristic); they are denied whatever the
//     score.
//   - Attestations are issued for admitted decisions only (APPROVED with
//     risk high or critical, or APPROVED/PENDING with require_attestation).
//   - Budget details are {limit, current, requested, reset_at, limit_name};
//     per-request limits have no current figure and no reset time. Hourly
//     windows are kept only for agents with an hourly limit, so the memory of
//     a window is bounded by its limit (at most MaxHourlyLimit).
//   - A reservation released by a denied or expired approval returns its
//     cost and tokens to today's counters when it was made today; the request
//     count is not returned (the request was made).
//   - A suspended agent may still log the execution of an action approved
//     before its suspension: the audit trail stays complete.
//   - Retries of one request (same source, id and scope: RequestScope) are
//     answered by the caller from the log (invariant 4, docs/ARCHITECTURE.md); Decide refuses a
//     second decision for an action ID that is still open or has an approval (REQ-409).
package domain
