package audit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/history/audit"
	"github.com/agentgate/agentgate/streams"
)

// chained encodes events as partition p's chain.
func chained(t *testing.T, p int32, evs ...*domain.Event) [][]byte {
	t.Helper()
	prev := ""
	out := make([][]byte, 0, len(evs))
	for i, ev := range evs {
		ev.Seq, ev.Prev, ev.Partition = uint64(i+1), prev, p
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		prev = streams.HashPayload(b)
	}
	return out
}

// twoPartitions is the source of partition 1's records, then partition 0's
// (a copy is checked whatever the order).
func twoPartitions(p0, p1 [][]byte) audit.Source {
	return audit.SourceFunc(func(ctx context.Context, fn func(audit.Record) error) error {
		if err := audit.Payloads(1, p1).Each(ctx, fn); err != nil {
			return err
		}
		return audit.Payloads(0, p0).Each(ctx, fn)
	})
}

// The audit checks each partition's copy of partition 0's principal-wide
// events against partition 0: the changes it carries, none skipped, and the
// hash of partition 0's record it names.
func TestCopiesCheckedAgainstPartition0(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	key := func(id, hash string) *domain.IssuePrincipalKey {
		return &domain.IssuePrincipalKey{PrincipalID: "org_1", KeyID: id, KeyHash: strings.Repeat(hash, 64)}
	}
	issue := func(k *domain.IssuePrincipalKey, global bool) *domain.Event {
		return &domain.Event{Time: at, Type: domain.EvPrincipalKeyIssued, KeyIssued: k,
			Command: &domain.Command{Type: domain.CmdIssuePrincipalKey, Principal: "*", IssueKey: k, Global: global}}
	}
	// Partition 0: a key issued before changes were copied (every
	// partition decided it), then two copied ones.
	p0 := chained(t, 0, issue(key("k0", "a"), false), issue(key("k1", "b"), true), issue(key("k2", "c"), true))
	copyOf := func(changes []domain.CopiedChange, seq uint64, hash string) *domain.Event {
		return &domain.Event{Time: at, Type: domain.EvPrincipalStateCopied, Command: &domain.Command{Type: domain.CmdCopyPrincipalState,
			Copy: &domain.PrincipalStateCopy{From: 0, Seq: seq, Hash: hash, Changes: changes}}}
	}
	c1 := domain.CopiedChange{Seq: 2, Type: domain.EvPrincipalKeyIssued, KeyIssued: key("k1", "b")}
	c2 := domain.CopiedChange{Seq: 3, Type: domain.EvPrincipalKeyIssued, KeyIssued: key("k2", "c")}
	h2, h3 := streams.HashPayload(p0[1]), streams.HashPayload(p0[2])
	for _, tc := range []struct {
		name   string
		p1     []*domain.Event
		broken string // "" intact
	}{
		{"one copy", []*domain.Event{copyOf([]domain.CopiedChange{c1, c2}, 3, h3)}, ""},
		{"two copies", []*domain.Event{copyOf([]domain.CopiedChange{c1}, 2, h2), copyOf([]domain.CopiedChange{c2}, 3, h3)}, ""},
		{"a change skipped", []*domain.Event{copyOf([]domain.CopiedChange{c2}, 3, h3)}, "partition 0's next principal-wide change is seq 2"},
		{"a change altered", []*domain.Event{copyOf([]domain.CopiedChange{c1,
			{Seq: 3, Type: domain.EvPrincipalKeyIssued, KeyIssued: key("k2", "d")}}, 3, h3)}, "not the change partition 0 recorded"},
		{"another hash", []*domain.Event{copyOf([]domain.CopiedChange{c1, c2}, 3, h2)}, "which is not that record's"},
		{"a change not copied", []*domain.Event{copyOf([]domain.CopiedChange{{Seq: 1, Type: domain.EvPrincipalKeyIssued, KeyIssued: key("k0", "a")}}, 1,
			streams.HashPayload(p0[0]))}, "carries partition 0's seq 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := audit.Verify(context.Background(), twoPartitions(p0, chained(t, 1, tc.p1...)), nil, audit.Options{SkipSignatures: true})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.broken == "" && !rep.OK():
				t.Fatalf("intact copies reported broken: %v", rep.Break)
			case tc.broken != "" && (rep.OK() || rep.Break.Kind != audit.KindCopy || rep.Break.Partition != 1 || !strings.Contains(rep.Break.Detail, tc.broken)):
				t.Fatalf("want a copy break %q, got %+v", tc.broken, rep.Break)
			}
		})
	}
	// Partition 1 alone (no partition 0 to check against) verifies as a
	// chain.
	rep, err := audit.Verify(context.Background(), audit.Payloads(1, chained(t, 1, copyOf([]domain.CopiedChange{c2}, 3, h3))), nil, audit.Options{SkipSignatures: true})
	if err != nil || !rep.OK() {
		t.Fatalf("partition 1 alone: %v %+v", err, rep)
	}
}
