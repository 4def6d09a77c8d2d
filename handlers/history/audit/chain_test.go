package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/history/audit"
	"github.com/agentgate/agentgate/streams"
)

// chainOf encodes n tick-like events chained as the worker chains them.
func chainOf(t testing.TB, n int) [][]byte {
	t.Helper()
	out := make([][]byte, 0, n)
	prev := ""
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		ev := &domain.Event{Seq: uint64(i), Prev: prev, Time: at.Add(time.Duration(i) * time.Millisecond),
			Type: domain.EvAgentStatusChanged, AgentID: fmt.Sprintf("agent_%d", i%7),
			Status: &domain.AgentStatusChange{Status: "active", Reason: "test"}}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		prev = streams.HashPayload(b)
	}
	return out
}

func verifyPayloads(t *testing.T, p [][]byte) *audit.Report {
	t.Helper()
	rep, err := audit.Verify(context.Background(), audit.Payloads(0, p), nil, audit.Options{SkipSignatures: true})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestChainIntact: invariant 3 (docs/ARCHITECTURE.md) — an untouched chain verifies.
func TestChainIntact(t *testing.T) {
	rep := verifyPayloads(t, chainOf(t, 50))
	if !rep.OK() {
		t.Fatalf("intact chain broken: %v", rep.Break)
	}
	if p := rep.Partitions[0]; p.Events != 50 || p.FirstSeq != 1 || p.LastSeq != 50 {
		t.Fatalf("report %+v", p)
	}
}

// TestChainEditedByte: one byte changed in an event breaks the link after it.
func TestChainEditedByte(t *testing.T) {
	p := chainOf(t, 20)
	p[9] = append([]byte(nil), p[9]...)
	i := len(p[9]) - 10
	p[9][i] ^= 0x01 // inside the reason string, the JSON stays valid
	rep := verifyPayloads(t, p)
	if rep.Break == nil || rep.Break.Kind != audit.KindPrev || rep.Break.Seq != 11 || rep.Break.Offset != 10 {
		t.Fatalf("break = %v, want prev at seq 11 offset 10", rep.Break)
	}
}

// TestChainDroppedEvent: a missing event is a gap at its seq.
func TestChainDroppedEvent(t *testing.T) {
	p := chainOf(t, 20)
	p = append(p[:4:4], p[5:]...)
	rep := verifyPayloads(t, p)
	if rep.Break == nil || rep.Break.Kind != audit.KindGap || rep.Break.Seq != 5 {
		t.Fatalf("break = %v, want gap at seq 5", rep.Break)
	}
}
