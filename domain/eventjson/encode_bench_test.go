package eventjson_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
)

// benchEvents returns the events the gate writes most, as Decide makes
// them (typed error details, not decoded ones): an approved calculate
// (the durable path's decision), a daily-cost denial with its error
// details and the execution log of the approved action.
func benchEvents(tb testing.TB) []struct {
	name string
	ev   *domain.Event
} {
	tb.Helper()
	st := domain.NewState()
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	seq := uint64(0)
	decide := func(cmd *domain.Command) *domain.Event {
		seq++
		now = now.Add(1500 * time.Millisecond)
		ev := domain.Decide(st, domain.Env{Now: now, Seq: seq}, cmd)
		ev.Prev = "7d41887935017930d505114fd1055a710795d65006aa28dfef6a1af2fa3f6fea"
		domain.Apply(st, ev)
		return ev
	}
	reg := decide(seedlog.Register("bench", "org_1", domain.TrustAutonomous,
		domain.Limits{MaxDailyCost: seedlog.USD(1), MaxRequestsPerHour: 5000}))
	if reg.Registered == nil {
		tb.Fatalf("registration refused: %+v", reg.Error)
	}
	agent := reg.Registered.AgentID
	approved := decide(seedlog.Verify(agent, "v1", "c1", 1, "calculate", seedlog.USD(0.01)))
	denied := decide(seedlog.Verify(agent, "v2", "c1", 2, "calculate", seedlog.USD(2.5)))
	executed := decide(seedlog.Execution(agent, "x1", approved.Decided.ActionID, seedlog.USD(0.008), 80))
	switch {
	case approved.Decided == nil || approved.Decided.Decision != domain.Approved:
		tb.Fatalf("approved: %+v", approved.Error)
	case denied.Decided == nil || denied.Decided.Decision != domain.BudgetExceeded || len(denied.Error.Details) == 0:
		tb.Fatalf("denied: %+v", denied.Error)
	case executed.Executed == nil:
		tb.Fatalf("executed: %+v", executed.Error)
	}
	return []struct {
		name string
		ev   *domain.Event
	}{{"approved", approved}, {"denied", denied}, {"executed", executed}}
}

// BenchmarkEncodeEvent encodes the frequent event shapes with the oracle,
// encoding/json (json.Marshal, what handlers.EncodeEvent once did), with
// Marshal (what it does now: a new slice per event) and with AppendEvent
// into a reused buffer. Compare with benchstat -col /encoder.
func BenchmarkEncodeEvent(b *testing.B) {
	encoders := []struct {
		name string
		enc  func(dst []byte, ev *domain.Event) ([]byte, error)
	}{
		{"json.Marshal", func(_ []byte, ev *domain.Event) ([]byte, error) { return json.Marshal(ev) }},
		{"Marshal", func(_ []byte, ev *domain.Event) ([]byte, error) { return eventjson.Marshal(ev) }},
		{"AppendEvent", func(dst []byte, ev *domain.Event) ([]byte, error) { return eventjson.AppendEvent(dst[:0], ev) }},
	}
	for _, c := range benchEvents(b) {
		for _, e := range encoders {
			b.Run("event="+c.name+"/encoder="+e.name, func(b *testing.B) {
				buf, err := e.enc(nil, c.ev)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(buf)))
				b.ReportAllocs()
				for b.Loop() {
					if buf, err = e.enc(buf, c.ev); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
