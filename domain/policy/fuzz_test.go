package policy

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"
)

// FuzzDecode: Decode never panics, returns a policy or a problem with a
// catalogue code, and a decoded policy encodes to JSON that decodes to
// itself.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"id":"p","type":"spending","scope":{"agents":["b","a"]},"spending":{"daily_cents":1000,"on_exceed":"notify"}}`,
		`{"id":"c","type":"category","scope":{"business_id":"x"},"override":true,"category":{"mode":"allow","categories":["food"]}}`,
		`{"id":"k","type":"confirmation","scope":{},"shadow":true,"confirmation":{"always":true,"above_cents":5}}`,
		`{"id":"w","type":"time_window","scope":{},"time_window":{"time_zone":"Europe/Paris","windows":[{"days":["mon"],"start":"09:00","end":"17:30"}],"outside":"queue"}}`,
		`{"id":"p","type":"spending","scope":{},"spending":{"daily_cents":1e3}}`,
		`{"id":"p","id":"p"}`, `[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, pr := Decode(data)
		if (p == nil) == (pr == nil) {
			t.Fatalf("policy %v and problem %v", p, pr)
		}
		if pr != nil {
			switch pr.Code {
			case CodeInvalidRequest, CodeMissingField, CodeTooLong, CodeUnsupportedType:
			default:
				t.Fatalf("code %s", pr.Code)
			}
			return
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, pr := Decode(out)
		if pr != nil {
			t.Fatalf("re-decoding %s: %v", out, pr)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("%+v re-decodes to %+v", p, q)
		}
	})
}

// FuzzEvaluate: against the benchmark's 20 policies and month of history,
// any execute gets one outcome, the same twice, consistent with itself: a
// block has a POLICY code and a policy, a queue a release time within the
// horizon at which the windows are open, the first notice is the
// verdict's.
func FuzzEvaluate(f *testing.F) {
	f.Add(int64(2500), int64(0), uint8(0), uint8(1), false)
	f.Add(int64(90001), int64(13*3600), uint8(8), uint8(0), true)
	f.Add(int64(-5), int64(-40*86400), uint8(3), uint8(3), false)
	f.Add(int64(1)<<62, int64(86400*400), uint8(1), uint8(2), true)
	s, l := benchSet(f), benchLedger()
	agents := []string{"a1", "a2", "a3", "a4", "a9"}
	businesses := []string{"shop", "travel", "bank", "casino"}
	cats := [][]string{{"food"}, nil, {"gambling"}, {"travel", "adult"}}
	f.Fuzz(func(t *testing.T, amount, offset int64, agent, business uint8, first bool) {
		offset %= 1 << 40
		x := Input{Now: t0.Add(time.Duration(offset) * time.Second), AgentID: agents[int(agent)%len(agents)],
			BusinessID: businesses[int(business)%len(businesses)], Categories: cats[int(business)%len(cats)],
			AmountCents: amount, FirstTime: first}
		out := Evaluate(s, l, x)
		if !reflect.DeepEqual(out, Evaluate(s, l, x)) {
			t.Fatal("two outcomes for one input")
		}
		switch out.Verdict {
		case Pass:
			if out.PolicyID != "" || out.Code != "" {
				t.Fatalf("pass %+v", out)
			}
		case Block:
			if out.PolicyID == "" || out.Code == "" || out.Notices[0].Kind != NoticeBlocked {
				t.Fatalf("block %+v", out)
			}
		case Confirm:
			if out.PolicyID == "" || out.Code != "" || out.Notices[0].Kind != NoticeConfirmNeeded {
				t.Fatalf("confirm %+v", out)
			}
		case Queue:
			if out.ReleaseAt.Before(x.Now.Truncate(time.Second)) || out.ReleaseAt.After(x.Now.Add((horizonDays+1)*Day)) || out.Notices[0].Kind != NoticeQueued {
				t.Fatalf("queue %+v at %s", out, x.Now)
			}
			y := x
			y.Now = out.ReleaseAt
			if again := Evaluate(s, l, y); again.Verdict == Queue {
				t.Fatalf("still queued at the release time %s: %+v", y.Now, again)
			}
		default:
			t.Fatalf("verdict %q", out.Verdict)
		}
		for _, fd := range out.Findings {
			if fd.Verdict == Pass || fd.Message == "" {
				t.Fatalf("finding %+v", fd)
			}
		}
	})
}

// FuzzLedger: a sequence of reservations and releases (each a byte triple:
// seconds forward, amount, release) keeps every total at least the exact
// rolling sum and at most the sum widened by one bucket.
func FuzzLedger(f *testing.F) {
	f.Add([]byte{1, 2, 0, 255, 255, 0, 3, 9, 1, 200, 1, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		type spend struct {
			at    time.Time
			cents int64
		}
		var l Ledger
		var live []spend
		at := t0
		for i := 0; i+2 < len(ops) && i < 3*2000; i += 3 {
			at = at.Add(time.Duration(ops[i]) * time.Duration(ops[i]) * 97 * time.Second)
			c := int64(ops[i+1]) + 1
			if ops[i+2]%4 == 1 && len(live) > 0 {
				k := int(ops[i+1]) % len(live)
				l.Release("a", "b", live[k].at, live[k].cents)
				live = append(live[:k], live[k+1:]...)
			} else {
				l.Reserve("a", "b", at, c)
				live = append(live, spend{at, c})
			}
			got := l.Totals(at, nil, "")
			for _, w := range []struct {
				d, width time.Duration
				v        int64
			}{{Day, time.Minute, got.Day}, {Week, time.Hour, got.Week}, {Month, time.Hour, got.Month}} {
				var exact, loose int64
				for _, s := range live {
					if s.at.After(at.Add(-w.d)) {
						exact += s.cents
					}
					if s.at.After(at.Add(-w.d - w.width)) {
						loose += s.cents
					}
				}
				if w.v < exact || w.v > loose {
					t.Fatalf("op %d window %s: total %d, exact %d, bound %d", i/3, w.d, w.v, exact, loose)
				}
			}
		}
	})
}

// FuzzAnalyze: spends drawn from the fuzzer's bytes (each 5 bytes: agent,
// hours forward, minutes, amount) give an analysis that does not depend
// on the input's order, whose daily trend sums every spend, and whose
// recommendations are valid policies.
func FuzzAnalyze(f *testing.F) {
	f.Add([]byte{0, 1, 0, 3, 1, 1, 2, 30, 200, 9, 0, 0, 5, 255, 255})
	f.Fuzz(func(t *testing.T, p []byte) {
		var spends []Spend
		at := t0
		var total int64
		for i := 0; i+4 < len(p) && i < 5*2000; i += 5 {
			at = at.Add(time.Duration(p[i+1])*time.Hour + time.Duration(p[i+2])*time.Minute)
			amount := int64(p[i+3])<<8 | int64(p[i+4])
			spends = append(spends, Spend{TransactionID: "t" + strconv.Itoa(i), AgentID: "a" + strconv.Itoa(int(p[i]%3)), BusinessID: "b", At: at, AmountCents: amount})
			total += amount
		}
		to := at.Add(time.Second)
		a := Analyze(spends, time.UTC, t0, to)
		rev := slices.Clone(spends)
		slices.Reverse(rev)
		x, _ := json.Marshal(a)
		y, _ := json.Marshal(Analyze(rev, time.UTC, t0, to))
		if string(x) != string(y) {
			t.Fatalf("order changed the analysis")
		}
		if len(a.Daily) < MaxTrendDays {
			var sum int64
			for _, d := range a.Daily {
				sum += d.Cents
			}
			if sum != total {
				t.Fatalf("daily trend sums %d of %d", sum, total)
			}
		}
		for _, r := range a.Recommendations {
			pol := r.Policy
			if pr := Validate(&pol); pr != nil {
				t.Fatalf("recommendation %+v: %v", r.Policy, pr)
			}
		}
	})
}
