package kafkagate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
)

// No overshoot on Kafka: a consumer's $10 daily spending limit, 500
// executes of $1 at once from three agents living on three partitions,
// through two HTTP instances and two gate instances: every execute is
// decided on the consumer's home partition, one writer of its ledger, so
// exactly ten execute and the rest are blocked by the policy, and what
// executes never sums past $10.
func TestKafkaExecuteNoOvershootAcrossInstances(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	dir := t.TempDir()
	startGate(t, brokers, lg, dir)
	startGate(t, brokers, lg, t.TempDir())
	hs := []*httpOverKafka{
		startHTTPOverKafka(t, brokers, lg, engines(t), 60*time.Second),
		startHTTPOverKafka(t, brokers, lg, engines(t), 60*time.Second),
	}
	c := newClient(t, brokers)
	principal := principalHomedAt(t, 2)
	type agent struct{ id, token string }
	var agents []agent
	for _, p := range []int32{0, 1, 3} {
		id, tok := registerAgentOn(t, c, principal, p)
		agents = append(agents, agent{id, tok})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if ev, err := hs[0].gate.Submit(ctx, businessCmd("books", "http://127.0.0.1:9/")); err != nil || ev.Type != domain.EvBusinessChanged {
		t.Fatalf("business: %v %+v", err, ev)
	}
	pol := &domain.Command{Type: domain.CmdPolicy, Principal: principal, Request: domain.RequestID{Source: "test", ID: "policy-daily"},
		Policy: &domain.PolicyChange{Op: domain.OpCreate, Policy: policy.Policy{ID: "daily", Type: policy.TypeSpending,
			Spending: &policy.Spending{DailyCents: 1000, OnExceed: policy.OnExceedBlock}}}}
	if ev, err := hs[1].gate.Submit(ctx, pol); err != nil || ev.Type != domain.EvPolicyChanged || ev.Partition != 2 {
		t.Fatalf("policy: %v %+v", err, ev)
	}

	const n = 500
	evs := make(chan *domain.Event, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			a := agents[i%len(agents)]
			ev, err := hs[i%2].gate.Submit(ctx, executeCmd(t, a.id, a.token, "books", fmt.Sprintf("spend-%d", i), 100))
			if err != nil {
				errs <- err
				return
			}
			evs <- ev
		}()
	}
	spent, executing := int64(0), 0
	for range n {
		select {
		case err := <-errs:
			t.Fatal(err)
		case ev := <-evs:
			if ev.Type != domain.EvExecuteDecided || ev.Partition != 2 || ev.Transaction == nil {
				t.Fatalf("an execute recorded as %s on partition %d: %v", ev.Type, ev.Partition, ev.Error)
			}
			switch tx := ev.Transaction; tx.Status {
			case domain.TxExecuting:
				executing++
				spent += tx.AmountCents
			case domain.TxBlocked:
				if ev.Error == nil || ev.Error.Code != domain.CodePolicySpending {
					t.Fatalf("blocked with %v", ev.Error)
				}
			default:
				t.Fatalf("an execute %s", tx.Status)
			}
		}
	}
	if spent > 1000 || executing != 10 {
		t.Fatalf("%d executes spent %d cents against a daily limit of 1000", executing, spent)
	}
}

// An execute a confirmation policy holds opens its approval on the
// consumer's home partition; POST /approvals/{id}/approve through another
// HTTP instance finds it there (the read model names an execute approval's
// consumer) and the transaction executes.
func TestKafkaExecuteApprovalResolvedOnTheHome(t *testing.T) {
	w := newExecWorld(t)
	b := startHTTPOverKafka(t, w.lg.brokers, w.lg, engines(t), 20*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w.business(ctx, t, w.h, "books")
	pol := &domain.Command{Type: domain.CmdPolicy, Principal: w.principal, Request: domain.RequestID{Source: "test", ID: "policy-confirm"},
		Policy: &domain.PolicyChange{Op: domain.OpCreate, Policy: policy.Policy{ID: "ask", Type: policy.TypeConfirmation,
			Confirmation: &policy.Confirmation{Always: true}}}}
	if ev, err := w.h.gate.Submit(ctx, pol); err != nil || ev.Type != domain.EvPolicyChanged {
		t.Fatalf("policy: %v %+v", err, ev)
	}
	ev, err := w.h.gate.Submit(ctx, executeCmd(t, w.agent, w.token, "books", "held-1", 300))
	if err != nil || ev.Type != domain.EvExecuteDecided || ev.Transaction.Status != domain.TxPendingApproval || ev.Transaction.ApprovalID == "" {
		t.Fatalf("execute: %v %+v", err, ev)
	}
	resolve := &domain.Command{Type: domain.CmdResolveApproval, Principal: w.principal, Request: domain.RequestID{Source: "test", ID: "approve-1"},
		Resolve: &domain.ResolveApproval{ApprovalID: ev.Transaction.ApprovalID, Approve: true}}
	res, err := b.gate.Submit(ctx, resolve)
	if err != nil || res.Type != domain.EvApprovalResolved || res.Partition != 2 {
		t.Fatalf("approve through the other instance: %v %s on partition %d %v", err, res.Type, res.Partition, res.Error)
	}
	if res.Transaction == nil || res.Transaction.Status != domain.TxExecuting {
		t.Fatalf("the approved transaction: %+v", res.Transaction)
	}
}
