package domain

import "testing"

// TestOpenTransactionKeepsItsDecisionSeq: the state's open transaction
// names the seq of the execute.decided event that holds its request (the
// adapter reads the request there), and no event carries that seq: an
// outcome's transaction is the state's without it.
func TestOpenTransactionKeepsItsDecisionSeq(t *testing.T) {
	g := newExecGate(t, ExecuteModeOpen, 100)
	ev := g.execute("shop", `{"amount_cents":40}`, "")
	tx := executing(t, ev)
	if tx.DecidedSeq != 0 {
		t.Fatalf("the execute.decided event carries decided_seq %d", tx.DecidedSeq)
	}
	open := g.s.Exec.Open[tx.ID]
	if open == nil || open.DecidedSeq != ev.Seq {
		t.Fatalf("open transaction %+v, want decided_seq %d", open, ev.Seq)
	}
	done := g.outcome(ExecuteOutcome{TransactionID: tx.ID, HTTPStatus: 200, Status: "completed"})
	if done.Type != EvExecuteCompleted || done.Transaction.DecidedSeq != 0 {
		t.Fatalf("outcome %s %+v", done.Type, done.Transaction)
	}
}
