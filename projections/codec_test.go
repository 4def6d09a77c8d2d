package projections

import (
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/agentgate/agentgate/domain"
)

func randStr(r *rand.Rand) string {
	const alphabet = "aZ09_-/ é\"\\<>&\x00\u2028"
	var b strings.Builder
	for n := r.IntN(12); n > 0; n-- {
		as := []rune(alphabet)
		b.WriteRune(as[r.IntN(len(as))])
	}
	return b.String()
}

func randTime(r *rand.Rand) time.Time {
	switch r.IntN(4) {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(r.Int64N(2e11)-6e10, 0).UTC() // years from about 70 to 8300
	default:
		return time.Unix(r.Int64N(4e9), r.Int64N(1e9)).UTC()
	}
}

func randActivity(r *rand.Rand) *Activity {
	a := &Activity{
		ActivityID: "act_" + randStr(r), AgentID: randStr(r), Timestamp: randTime(r), Seq: r.Uint64(),
		Action:       ActivityAction{Type: randStr(r), Tool: randStr(r), Query: randStr(r), Target: randStr(r)},
		Verification: ActivityVerify{Status: randStr(r), Engine: randStr(r), RiskLevel: []domain.Risk{domain.RiskLow, domain.RiskMedium, domain.RiskHigh, domain.RiskCritical}[r.IntN(4)]},
		Decision:     domain.Decision(randStr(r)), ConversationID: randStr(r), StepNumber: r.Int64() - 1<<62,
		Cost:          ActivityCost{USD: domain.USD(r.Int64N(1e12) - 5e11), Tokens: r.Int64N(1 << 40), Actual: r.IntN(2) == 0},
		AttestationID: randStr(r),
	}
	a.ActionType = a.Action.Type // derived from it when read, never stored
	if r.IntN(2) == 0 {
		a.Action.Parameters = json.RawMessage(`{ "k" : [1.0, "<&>"], "z": null }`)
	}
	if r.IntN(2) == 0 {
		a.Error = &domain.Error{Code: "QWED-AGENT-LOOP-003", Message: randStr(r), Details: map[string]any{"n": 2.0, "s": "x"}}
	}
	if r.IntN(2) == 0 {
		a.Approval = &ActivityApproval{ApprovalID: randStr(r), Status: domain.ApprovalStatus(randStr(r))}
		if r.IntN(2) == 0 {
			t := randTime(r)
			a.Approval.ResolvedAt = &t
		}
	}
	if r.IntN(2) == 0 {
		a.Execution = &ActivityExecution{Success: r.IntN(2) == 0, ResultHash: randStr(r), LoggedAt: randTime(r),
			Sandboxed: r.IntN(2) == 0, SandboxViolation: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			a.Execution.Sandbox = randStr(r)
		}
		if r.IntN(2) == 0 {
			a.Execution.PIIViolation = r.IntN(2) == 0
			for range r.IntN(3) {
				a.Execution.OutputFindings = append(a.Execution.OutputFindings,
					domain.PIIFinding{Kind: randStr(r), Location: randStr(r), Offset: r.Int64N(1 << 20)})
			}
		}
	}
	return a
}

// jsonRoundTrip is what the JSON store gave back for a value: the binary
// form must give back exactly the same.
func jsonRoundTrip[T any](t *testing.T, v *T) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The binary forms decode to what the JSON store decoded (the values the
// API serves are unchanged), and every truncation or extension of an
// encoded value is an error, never a panic or a wrong entity.
func TestStoredEntitiesBinaryFormRoundTrips(t *testing.T) {
	singleGoroutine(t)
	r := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 2000; i++ {
		a := randActivity(r)
		v, err := encodeActivity(nil, a)
		if err != nil {
			t.Fatalf("encoding %+v: %v", a, err)
		}
		var got Activity
		if err := decodeActivity(v, &got); err != nil {
			t.Fatalf("decoding %+v: %v", a, err)
		}
		if want := jsonRoundTrip(t, a); !reflect.DeepEqual(&got, want) {
			t.Fatalf("activity round trip:\n got  %+v\n want %+v", got, *want)
		}
		checkStrict(t, v, func(b []byte) error { var x Activity; return decodeActivity(b, &x) })

		oa := &domain.OpenAction{Day: r.Int64N(1e6), ReservedCost: domain.USD(r.Int64N(1e12)), ReservedTokens: r.Int64N(1e9),
			Status: domain.Decision(randStr(r)), At: randTime(r), SandboxRequired: r.IntN(2) == 0}
		ov := encodeOpen(nil, "act_x", oa)
		id, gotOA, err := decodeOpen(ov)
		if err != nil || id != "act_x" || !reflect.DeepEqual(gotOA, jsonRoundTrip(t, oa)) {
			t.Fatalf("open action round trip: %v %q %+v, want %+v", err, id, gotOA, oa)
		}
		checkStrict(t, ov, func(b []byte) error { _, _, err := decodeOpen(b); return err })

		c := &domain.Conversation{LastStep: r.Int64N(100), LastFingerprint: randStr(r), Repeats: r.Int64N(5), UpdatedAt: randTime(r)}
		for n := r.IntN(4); n > 0; n-- {
			c.StateWindow = append(c.StateWindow, randStr(r))
		}
		cv := encodeConversation(nil, c)
		gotC, err := decodeConversation(cv)
		if err != nil || !reflect.DeepEqual(gotC, jsonRoundTrip(t, c)) {
			t.Fatalf("conversation round trip: %v %+v, want %+v", err, gotC, c)
		}
		checkStrict(t, cv, func(b []byte) error { _, err := decodeConversation(b); return err })
	}
}

// An agent record decodes to what its JSON form decoded, nil and empty
// lists included where JSON keeps them apart.
func TestAgentRecordBinaryFormRoundTrips(t *testing.T) {
	singleGoroutine(t)
	r := rand.New(rand.NewPCG(9, 4))
	times := func() []time.Time {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return []time.Time{}
		}
		var ts []time.Time
		for n := 1 + r.IntN(50); n > 0; n-- {
			ts = append(ts, randTime(r))
		}
		return ts
	}
	for i := 0; i < 500; i++ {
		a := &domain.Agent{ID: "agent_" + randStr(r), DID: randStr(r), Status: "active", Trust: domain.TrustLevel(r.IntN(4)),
			CreatedAt: randTime(r), TokenHash: randStr(r), TotalActions: r.Int64N(1e6),
			Usage:         domain.Usage{Day: r.Int64N(30000), DailyCost: domain.USD(r.Int64N(1e9)), HourlyRequests: times(), HourlyToolCalls: times()},
			BudgetDenials: times()}
		if r.IntN(3) > 0 {
			a.Recent = []bool{}
			for n := r.IntN(100); n > 0; n-- {
				a.Recent = append(a.Recent, r.IntN(2) == 0)
			}
		}
		if r.IntN(2) == 0 {
			a.LoggedActions = []string{}
			for n := r.IntN(5); n > 0; n-- {
				a.LoggedActions = append(a.LoggedActions, "act_"+randStr(r))
			}
		}
		v, err := encodeAgent(nil, a)
		if err != nil {
			t.Fatal(err)
		}
		var got domain.Agent
		if err := decodeAgent(v, &got); err != nil {
			t.Fatalf("decoding: %v", err)
		}
		want := jsonRoundTrip(t, a)
		gb, _ := json.Marshal(&got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) || (got.Recent == nil) != (want.Recent == nil) || (got.BudgetDenials == nil) != (want.BudgetDenials == nil) {
			t.Fatalf("agent round trip:\n got  %s\n want %s", gb, wb)
		}
		checkStrict(t, v, func(b []byte) error { var x domain.Agent; return decodeAgent(b, &x) })
		// AgentAuth reads only the JSON part.
		if j, err := agentJSON(v); err != nil || !json.Valid(j) {
			t.Fatalf("agent JSON part: %v", err)
		}
	}
}

// An agent snapshot decodes to what its JSON form decoded, nil and empty
// collections included (the time-travel API serves them as null and {}).
func TestAgentSnapshotBinaryFormRoundTrips(t *testing.T) {
	singleGoroutine(t)
	r := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < 300; i++ {
		a := &domain.Agent{ID: "agent_" + randStr(r), Status: "active", Trust: domain.TrustLevel(r.IntN(4)), CreatedAt: randTime(r),
			Recent: []bool{true, false}, Usage: domain.Usage{Day: 3, HourlyRequests: []time.Time{randTime(r)}}}
		if r.IntN(4) > 0 {
			a.Conversations = map[string]*domain.Conversation{}
			for n := r.IntN(5); n > 0; n-- {
				a.Conversations[randStr(r)] = &domain.Conversation{LastStep: r.Int64N(50), StateWindow: []string{randStr(r)}, UpdatedAt: randTime(r)}
			}
		}
		if r.IntN(4) > 0 {
			a.OpenActions = map[string]*domain.OpenAction{}
			a.OpenOrder = []string{}
			for n := r.IntN(5); n > 0; n-- {
				id := "act_" + randStr(r)
				a.OpenActions[id] = &domain.OpenAction{Day: 1, ReservedCost: 5, Status: domain.Pending, At: randTime(r)}
				a.OpenOrder = append(a.OpenOrder, id)
			}
		}
		sn := &AgentSnapshot{Seq: r.Uint64(), Time: randTime(r), Agent: a, Approvals: []*domain.Approval{}}
		if r.IntN(2) == 0 {
			sn.Approvals = append(sn.Approvals, &domain.Approval{ID: "act_1", AgentID: a.ID, Status: domain.ApprovalPending})
		}
		v, err := encodeSnapshot(nil, sn)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeSnapshot(v)
		if err != nil {
			t.Fatalf("decoding: %v", err)
		}
		want := jsonRoundTrip(t, sn)
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if !reflect.DeepEqual(got, want) || string(gb) != string(wb) {
			t.Fatalf("snapshot round trip:\n got  %s\n want %s", gb, wb)
		}
		checkStrict(t, v, func(b []byte) error { _, err := decodeSnapshot(b); return err })
	}
}

func checkStrict(t *testing.T, v []byte, decode func([]byte) error) {
	t.Helper()
	for n := 0; n < len(v); n++ {
		if decode(v[:n]) == nil {
			t.Fatalf("a value cut to %d of %d bytes decoded", n, len(v))
		}
	}
	if decode(append(append([]byte(nil), v...), 0)) == nil {
		t.Fatal("a value with a trailing byte decoded")
	}
	if decode(append([]byte(`{"seq":1}`), v...)) == nil {
		t.Fatal("a JSON value decoded as a binary one")
	}
}

// Any bytes given to the decoders give an entity or an error.
func FuzzStoredEntityDecoders(f *testing.F) {
	a, _ := encodeActivity(nil, randActivity(rand.New(rand.NewPCG(1, 2))))
	f.Add(a)
	ao, _ := encodeActivity(nil, &Activity{ActivityID: "act_1", Execution: &ActivityExecution{PIIViolation: true,
		OutputFindings: []domain.PIIFinding{{Kind: "card_number", Location: "output", Offset: 8}}}})
	f.Add(ao)
	f.Add(encodeOpen(nil, "act_1", &domain.OpenAction{Status: domain.Approved}))
	f.Add(encodeConversation(nil, &domain.Conversation{StateWindow: []string{"a", "b"}}))
	sn, _ := encodeSnapshot(nil, &AgentSnapshot{Seq: 9, Agent: &domain.Agent{ID: "a",
		Conversations: map[string]*domain.Conversation{"c": {LastStep: 1}},
		OpenActions:   map[string]*domain.OpenAction{"x": {Day: 1}}, OpenOrder: []string{"x"}}})
	f.Add(sn)
	ag, _ := encodeAgent(nil, &domain.Agent{ID: "a", Recent: []bool{true}, Usage: domain.Usage{HourlyRequests: []time.Time{{}}}})
	f.Add(ag)
	f.Fuzz(func(t *testing.T, b []byte) {
		var x Activity
		_ = decodeActivity(b, &x)
		_, _, _ = decodeOpen(b)
		_, _ = decodeConversation(b)
		_, _ = decodeSnapshot(b)
		var ag domain.Agent
		_ = decodeAgent(b, &ag)
	})
}

// A store written in another format (the JSON layout of earlier versions)
// is emptied on open, so that recovery rebuilds it from the log, and an
// empty store records the current format.
func TestStoreOfAnotherFormatIsRebuilt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stale := activityKey("agent_1", time.Unix(0, 0), 1)
	for _, kv := range [][2][]byte{{stale, []byte(`{"activity_id":"act_1"}`)}, {key(tMeta, "ckpt"), []byte(`{"seq":1,"hash":"x"}`)}} {
		if err := db.Set(kv[0], kv[1], pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("opening a store of another format: %v", err)
	}
	ck, err := s.Checkpoint()
	if err != nil || ck.Seq != 0 {
		t.Fatalf("checkpoint of the rebuilt store: %+v %v, want zero (rebuild from the log)", ck, err)
	}
	if _, closer, err := s.db.Get(stale); err == nil {
		closer.Close()
		t.Fatal("the stale activity survived")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened, the store is of the current format and keeps its data.
	s, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, closer, err := s.db.Get(formatKey)
	if err != nil || string(v) != storeFormat {
		t.Fatalf("format key: %q %v", v, err)
	}
	closer.Close()
}
