// Package adapter calls businesses after the commit point: the runner of
// issue 14 (the Agent Policy Engine spec §2, "forward to adapter").
//
// A transaction that became executing (an execute decided executing, an
// execute approval approved, a queued execute released) is in the log
// before any business hears of it. The Runner then POSTs the execute's
// request to the business's registered endpoint, with the transaction ID
// as Idempotency-Key and the gate's signed decision (attest.ExecuteTyp) in
// X-Agentgate-Decision, and records the business's answer through the
// worker as a qwed.execute.outcome command, which execute.completed
// records. A gate that stops (or dies) between the decision and the
// outcome calls the transaction again, with the same key, when it starts
// (or when it takes the partition over): the business is called at least
// once and the outcome is recorded exactly once (Decide refuses a second).
//
// The Caller is the HTTP part: bounded answers, a timeout per attempt,
// retries with exponential backoff on transport errors, 408, 429 and 5xx,
// then a failed outcome (QWED-EXEC-008). NetworkPolicy is the exposure to
// server-side request forgery: see its documentation and
// docs/ARCHITECTURE.md, "Calling the business: the adapter runner".
package adapter
