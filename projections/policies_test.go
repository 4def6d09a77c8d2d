package projections

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
)

// policyChange decides a change of a policy of consumer (the admin's
// key naming it when admin is set) and returns its seq.
func (g *testGate) policyChange(consumer, op string, admin bool, p policy.Policy) uint64 {
	g.t.Helper()
	c := &domain.PolicyChange{Op: op, Policy: p}
	principal := consumer
	if admin {
		principal, c.Consumer = domain.AdminPrincipal, consumer
	}
	ev := g.do(&domain.Command{Type: domain.CmdPolicy, Principal: principal, Request: domain.RequestID{Source: "test", ID: fmt.Sprint("p", g.seq)}, Policy: c})
	if ev.Type != domain.EvPolicyChanged {
		g.t.Fatalf("%s %s refused: %+v", op, p.ID, ev.Error)
	}
	return ev.Seq
}

func daily(id string, cents int64) policy.Policy {
	return policy.Policy{ID: id, Type: policy.TypeSpending, Spending: &policy.Spending{DailyCents: cents}}
}

// TestPolicyVersionsAtSeq pins GET /policies/{id}?at_seq='s read: the
// version in force right after any event is the last change at or before
// it (a deletion included), each consumer's own (the admin's changes
// naming a consumer are that consumer's), and LoadState restores the
// current policies with their versions.
func TestPolicyVersionsAtSeq(t *testing.T) {
	for _, batch := range []int{1, 4} {
		g := newTestGate(t, batch)
		s1 := g.policyChange("alice", domain.OpCreate, false, daily("cap", 1000))
		g.policyChange("bob", domain.OpCreate, false, daily("cap", 5))
		s2 := g.policyChange("alice", domain.OpUpdate, true, daily("cap", 2000))
		s3 := g.policyChange("alice", domain.OpDelete, false, policy.Policy{ID: "cap"})
		s4 := g.policyChange("alice", domain.OpCreate, true, daily("cap", 3000))
		g.assertLoadStateEqual()
		for _, c := range []struct {
			seq     uint64
			version int64
			cents   int64
			deleted bool
		}{{s1, 1, 1000, false}, {s1 + 1, 1, 1000, false}, {s2, 2, 2000, false}, {s3, 3, 2000, true}, {s4, 4, 3000, false}, {s4 + 100, 4, 3000, false}} {
			v, err := g.store.PolicyAt("alice", "cap", c.seq)
			if err != nil || v.Policy.Version != c.version || v.Policy.Spending.DailyCents != c.cents || v.Deleted != c.deleted || v.Consumer != "alice" {
				t.Errorf("batch %d at %d: %+v, %v", batch, c.seq, v, err)
			}
		}
		if _, err := g.store.PolicyAt("alice", "cap", s1-1); !errors.Is(err, ErrNotFound) {
			t.Errorf("before its creation: %v", err)
		}
		if v, err := g.store.PolicyAt("bob", "cap", s4); err != nil || v.Policy.Spending.DailyCents != 5 {
			t.Errorf("bob's: %+v, %v", v, err)
		}
		if _, err := g.store.PolicyAt("carol", "cap", s4); !errors.Is(err, ErrNotFound) {
			t.Errorf("carol's: %v", err)
		}
		var all []int64
		after := uint64(0)
		for {
			vs, next, err := g.store.PolicyVersions("alice", "cap", after, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				all = append(all, v.Policy.Version)
			}
			if next == 0 {
				break
			}
			after = next
		}
		if fmt.Sprint(all) != "[1 2 3 4]" {
			t.Errorf("versions %v", all)
		}
		c, err := g.store.Consumer("alice")
		if err != nil || c.Policies.Get("cap") == nil || c.Policies.Get("cap").Version != 4 {
			t.Errorf("alice's current policies: %+v, %v", c, err)
		}
	}
}
