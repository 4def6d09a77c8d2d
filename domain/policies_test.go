package domain

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/policy"
)

func spendingPolicy(id string, daily int64) policy.Policy {
	return policy.Policy{ID: id, Type: policy.TypeSpending, Spending: &policy.Spending{DailyCents: daily}}
}

func policyCmd(principal, op, consumer string, p policy.Policy) *Command {
	return &Command{Type: CmdPolicy, Principal: principal, Policy: &PolicyChange{Op: op, Consumer: consumer, Policy: p}}
}

// TestPolicyChangeVersions: each change of a policy gives it the version
// after its last, a re-created one included; the state holds the current
// policies of each consumer apart.
func TestPolicyChangeVersions(t *testing.T) {
	g := newGate(t)
	want := func(ev *Event, typ EventType, version int64) {
		t.Helper()
		if ev.Type != typ || typ == EvPolicyChanged && ev.Policy.Version != version {
			t.Fatalf("%s %+v %+v, want %s version %d", ev.Type, ev.Error, ev.Policy, typ, version)
		}
	}
	want(g.exec(policyCmd("org_1", OpCreate, "", spendingPolicy("daily", 1000))), EvPolicyChanged, 1)
	want(g.exec(policyCmd("org_1", OpUpdate, "", spendingPolicy("daily", 2000))), EvPolicyChanged, 2)
	want(g.exec(policyCmd(AdminPrincipal, OpUpdate, "org_1", spendingPolicy("daily", 3000))), EvPolicyChanged, 3)
	want(g.exec(policyCmd("org_2", OpCreate, "", spendingPolicy("daily", 5))), EvPolicyChanged, 1)
	set := consumerPolicies(g.s, "org_1")
	if set.Len() != 1 || set.Get("daily").Spending.DailyCents != 3000 || set.Get("daily").Version != 3 {
		t.Fatalf("org_1 %+v", set)
	}
	if consumerPolicies(g.s, "org_2").Get("daily").Spending.DailyCents != 5 {
		t.Fatal("org_2's policy")
	}
	ev := g.exec(policyCmd("org_1", OpDelete, "", policy.Policy{ID: "daily"}))
	want(ev, EvPolicyChanged, 4)
	if ev.Policy.Spending.DailyCents != 3000 {
		t.Fatalf("a delete records the policy deleted: %+v", ev.Policy)
	}
	if consumerPolicies(g.s, "org_1").Get("daily") != nil {
		t.Fatal("deleted policy still current")
	}
	want(g.exec(policyCmd("org_1", OpCreate, "", spendingPolicy("daily", 10))), EvPolicyChanged, 5)
	status, body := Reply(g.events[len(g.events)-1])
	r, ok := body.(PolicyReply)
	if status != 201 || !ok || r.Consumer != "org_1" || r.Policy.Version != 5 || r.Seq != g.seq {
		t.Fatalf("reply %d %+v", status, body)
	}
}

// TestPolicyChangeRefusals: each refusal is recorded with its code and
// changes nothing.
func TestPolicyChangeRefusals(t *testing.T) {
	g := newGate(t)
	g.exec(policyCmd("org_1", OpCreate, "", spendingPolicy("daily", 1000)))
	versioned := spendingPolicy("v", 1)
	versioned.Version = 9
	bad := spendingPolicy("neg", -1)
	unknownType := policy.Policy{ID: "x", Type: "vibes"}
	for _, c := range []struct {
		name string
		cmd  *Command
		code Code
	}{
		{"no payload", &Command{Type: CmdPolicy, Principal: "org_1"}, CodeMissingField},
		{"agent token", &Command{Type: CmdPolicy, TokenHash: strings.Repeat("a", 64), Policy: &PolicyChange{Op: OpCreate, Policy: spendingPolicy("p", 1)}}, CodeForbidden},
		{"no key", &Command{Type: CmdPolicy, Policy: &PolicyChange{Op: OpCreate, Policy: spendingPolicy("p", 1)}}, CodeMissingAPIKey},
		{"admin without consumer", policyCmd(AdminPrincipal, OpCreate, "", spendingPolicy("p", 1)), CodeMissingField},
		{"another consumer", policyCmd("org_2", OpUpdate, "org_1", spendingPolicy("daily", 1)), CodeForbidden},
		{"consumer too long", policyCmd(AdminPrincipal, OpCreate, strings.Repeat("c", 257), spendingPolicy("p", 1)), CodeInvalidRequest},
		{"no op", policyCmd("org_1", "", "", spendingPolicy("p", 1)), CodeMissingField},
		{"bad op", policyCmd("org_1", "upsert", "", spendingPolicy("p", 1)), CodeInvalidRequest},
		{"create existing", policyCmd("org_1", OpCreate, "", spendingPolicy("daily", 1)), CodeConflict},
		{"update unknown", policyCmd("org_1", OpUpdate, "", spendingPolicy("nope", 1)), CodeNotFound},
		{"delete unknown", policyCmd("org_1", OpDelete, "", policy.Policy{ID: "nope"}), CodeNotFound},
		{"delete without id", policyCmd("org_1", OpDelete, "", policy.Policy{}), CodeMissingField},
		{"client version", policyCmd("org_1", OpCreate, "", versioned), CodeInvalidRequest},
		{"negative limit", policyCmd("org_1", OpCreate, "", bad), CodeInvalidRequest},
		{"unknown type", policyCmd("org_1", OpCreate, "", unknownType), CodeUnsupportedType},
		{"bad zone", policyCmd("org_1", OpCreate, "", policy.Policy{ID: "w", Type: policy.TypeTimeWindow, TimeWindow: &policy.TimeWindow{TimeZone: "Mars/Base",
			Windows: []policy.Window{{Days: []string{"mon"}, Start: "09:00", End: "10:00"}}}}), CodeInvalidRequest},
	} {
		before := stateJSON(t, g.s)
		ev := g.exec(c.cmd)
		if ev.Type != EvCommandRejected || ev.Error.Code != c.code {
			t.Errorf("%s: %s %+v, want %s", c.name, ev.Type, ev.Error, c.code)
		}
		if !bytes.Equal(before, stateJSON(t, g.s)) {
			t.Errorf("%s: the refusal changed the state", c.name)
		}
	}
}

// TestPolicyChangeBounded: a consumer holds at most MaxConsumerPolicies;
// updating one at the limit is still allowed.
func TestPolicyChangeBounded(t *testing.T) {
	g := newGate(t)
	for i := range MaxConsumerPolicies {
		if ev := g.exec(policyCmd("org_1", OpCreate, "", spendingPolicy("p"+strconv.Itoa(i), 1))); ev.Type != EvPolicyChanged {
			t.Fatalf("policy %d: %+v", i, ev.Error)
		}
	}
	if ev := g.exec(policyCmd("org_1", OpCreate, "", spendingPolicy("one-more", 1))); ev.Type != EvCommandRejected || ev.Error.Code != CodeInvalidRequest {
		t.Fatalf("over the limit: %s %+v", ev.Type, ev.Error)
	}
	if ev := g.exec(policyCmd("org_1", OpUpdate, "", spendingPolicy("p7", 2))); ev.Type != EvPolicyChanged {
		t.Fatalf("update at the limit: %+v", ev.Error)
	}
	if ev := g.exec(policyCmd("org_2", OpCreate, "", spendingPolicy("p0", 1))); ev.Type != EvPolicyChanged {
		t.Fatalf("another consumer: %+v", ev.Error)
	}
}

// TestPolicyChangeNormalizesWithoutTouchingTheCommand: the event's policy
// is normalized (agents sorted), the recorded command stays as sent, and
// re-deciding the recorded command gives the same bytes.
func TestPolicyChangeNormalizesWithoutTouchingTheCommand(t *testing.T) {
	g := newGate(t)
	p := spendingPolicy("group", 100)
	p.Scope.Agents = []string{"b", "a"}
	ev := g.exec(policyCmd("org_1", OpCreate, "", p))
	if ev.Type != EvPolicyChanged || strings.Join(ev.Policy.Scope.Agents, ",") != "a,b" || strings.Join(ev.Command.Policy.Policy.Scope.Agents, ",") != "b,a" {
		t.Fatalf("%+v / %+v", ev.Policy.Scope, ev.Command.Policy.Policy.Scope)
	}
	s := NewState()
	again := Decide(s, Env{Now: ev.Time, Seq: ev.Seq, Partition: ev.Partition}, ev.Command)
	a, _ := json.Marshal(ev)
	b, _ := json.Marshal(again)
	if !bytes.Equal(a, b) {
		t.Fatalf("re-decided\n%s\nwant\n%s", b, a)
	}
}

// TestPolicyStateClone: a clone of the state shares no policy set with
// the original (replay --verify and the tests re-decide on copies).
func TestPolicyStateClone(t *testing.T) {
	g := newGate(t)
	g.exec(policyCmd("org_1", OpCreate, "", spendingPolicy("daily", 1000)))
	c := g.s.Clone()
	ev := Decide(c, Env{Now: g.now, Seq: 99}, policyCmd("org_1", OpUpdate, "", spendingPolicy("daily", 5)))
	Apply(c, ev)
	if got := consumerPolicies(g.s, "org_1").Get("daily"); got.Spending.DailyCents != 1000 || got.Version != 1 {
		t.Fatalf("changing the clone changed the original: %+v", got)
	}
	if consumerPolicies(c, "org_1").Get("daily").Version != 2 {
		t.Fatal("the clone did not change")
	}
}
