package gatetest

import (
	"context"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/streams"
)

// AppendNotices appends to lg, the log of partition p of a gate that is
// not running (0 for an embedded gate), an execute.decided event of consumer's transaction tx (blocked, 1250 USD
// cents at business "shop", policy "pol_daily") carrying one notice of
// each of kinds, as the execute rules record one, and returns its seq.
// The gate projects it, and its webhooks' deliveries, when it opens.
func AppendNotices(t testing.TB, lg streams.Log, p int32, consumer, tx string, kinds ...string) uint64 {
	t.Helper()
	h := lg.Head()
	txn := &domain.Transaction{ID: tx, Consumer: consumer, AgentID: "agent_1", BusinessID: "shop", AmountCents: 1250,
		Currency: "USD", Status: domain.TxBlocked, PolicyID: "pol_daily"}
	for _, k := range kinds {
		txn.Notices = append(txn.Notices, domain.Notice{Kind: k, PolicyID: "pol_daily", Message: "daily limit: " + k})
	}
	ev := &domain.Event{Seq: h.Seq + 1, Prev: h.Hash, Partition: p, Time: time.Now().UTC(), Type: domain.EvExecuteDecided,
		Transaction: txn, Command: &domain.Command{Type: domain.CmdExecute, Request: domain.RequestID{Source: "test", ID: tx}}}
	payload, err := eventjson.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := lg.Append(context.Background(), []streams.Record{{Seq: ev.Seq, Prev: h.Hash, Payload: payload}}); err != nil {
		t.Fatal(err)
	}
	return ev.Seq
}
