package a2a

import (
	"bytes"
	"encoding/json"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/cockroachdb/apd/v3"
)

var problemCodes = []string{CodeInvalidRequest, CodeMissingField, CodeTooLong, CodeUnsupportedType}

// FuzzDecode checks that Decode never panics, returns a message or a
// problem (never both), that a decoded message is valid, and that it
// decodes again, re-encoded, to the same message. DecodeDigest returns
// what Decode does, and the digest of an accepted payload
// (PayloadDigest), which ValidateDigested then accepts without the
// canonical form.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"sender_agent_id":"agent-A","receiver_agent_id":"agent-B","payload_type":"general","payload":{"message":"Hello!"}}`,
		`{"sender_agent_id":"a","receiver_agent_id":"b","payload":{},"timestamp":"2026-03-26T00:00:00Z","trace_id":"demo_001"}`,
		`{"sender_agent_id":"a","receiver_agent_id":"b","payload_type":"financial_transaction","payload":{"data":{"claimed_total":1e400}}}`,
		`{"sender_agent_id":"a\u0000","receiver_agent_id":"b","payload":[]}`,
		`{"sender_agent_id":"a","SENDER_AGENT_ID":"b"}`,
		`{"sender_agent_id":"\ud800","receiver_agent_id":"b","payload":{"a":{"b":[1,2,{"c":null}]}}}`,
		`[1,2]`, `{`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, p := Decode(data, 4096)
		if (m == nil) == (p == nil) {
			t.Fatalf("Decode(%q) = %v, %v", data, m, p)
		}
		md, digest, pd := DecodeDigest(data, 4096)
		if !reflect.DeepEqual(md, m) || !reflect.DeepEqual(pd, p) || (digest == "") != (m == nil) {
			t.Fatalf("DecodeDigest(%q) = %+v, %q, %+v; Decode %+v, %+v", data, md, digest, pd, m, p)
		}
		if p != nil {
			if !slices.Contains(problemCodes, p.Code) || p.Message == "" {
				t.Fatalf("problem %+v", p)
			}
			if p.Offset > len(data) {
				t.Fatalf("problem offset %d past %d bytes", p.Offset, len(data))
			}
			return
		}
		if p := Validate(m, 4096); p != nil {
			t.Fatalf("Decode accepted %q, Validate refuses it: %v", data, p)
		}
		d1, err := PayloadDigest(m.Payload)
		if err != nil {
			t.Fatalf("PayloadDigest of an accepted payload: %v", err)
		}
		if digest != d1 || !IsDigest(digest) {
			t.Fatalf("DecodeDigest's digest %q, PayloadDigest's %q", digest, d1)
		}
		if p := ValidateDigested(m, 4096); p != nil {
			t.Fatalf("ValidateDigested refuses an accepted message: %v", p)
		}
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("encoding %+v: %v", m, err)
		}
		m2, p := Decode(enc, 4096)
		if p != nil {
			t.Fatalf("re-decoding %s: %v", enc, p)
		}
		d2, _ := PayloadDigest(m2.Payload)
		if m2.SenderAgentID != m.SenderAgentID || m2.ReceiverAgentID != m.ReceiverAgentID || m2.PayloadType != m.PayloadType ||
			m2.Timestamp != m.Timestamp || m2.TraceID != m.TraceID || d1 != d2 {
			t.Fatalf("round trip: %+v != %+v", m2, m)
		}
	})
}

// refTotals recomputes finance_guard's totals the slow way (encoding/json,
// apd's own parser): the oracle of FuzzFinanceGuard. ok is false when the
// payload makes no claim.
func refTotals(t *testing.T, payload []byte) (claimed, computed string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("the guard accepted %q, encoding/json refuses it: %v", payload, err)
	}
	data, _ := v["data"].(map[string]any)
	num := func(x any, def string) *apd.Decimal {
		s := def
		switch x := x.(type) {
		case json.Number:
			s = string(x)
		case string:
			s = x
		}
		d, _, err := apd.NewFromString(s)
		if err != nil {
			t.Fatalf("the guard accepted %q, apd refuses %q: %v", payload, s, err)
		}
		return d
	}
	items, _ := data["line_items"].([]any)
	if data["claimed_total"] == nil || len(items) == 0 {
		return "", "", false
	}
	sum := new(apd.Decimal)
	for _, it := range items {
		item := it.(map[string]any)
		var prod apd.Decimal
		if _, err := financeCtx.Mul(&prod, num(item["amount"], "0"), num(item["quantity"], "1")); err != nil {
			t.Fatal(err)
		}
		if _, err := financeCtx.Add(sum, sum, &prod); err != nil {
			t.Fatal(err)
		}
	}
	var c, s apd.Decimal
	financeCtx.Quantize(&c, num(data["claimed_total"], ""), -2)
	financeCtx.Quantize(&s, sum, -2)
	c.Negative = c.Negative && !c.IsZero()
	s.Negative = s.Negative && !s.IsZero()
	return c.Text('f'), s.Text('f'), true
}

// FuzzFinanceGuard checks that FinanceGuard never panics, blocks exactly
// on a problem or a mismatch, and agrees with a slow oracle.
func FuzzFinanceGuard(f *testing.F) {
	for _, s := range []string{
		string(seedFinancial("150.00")), string(seedFinancial("999.99")),
		`{"data":{"claimed_total":"0.3","line_items":[{"amount":0.1},{"amount":"0.2","quantity":1}]}}`,
		`{"data":{"claimed_total":1,"line_items":[{"amount":NaN}]}}`,
		`{"data":{"claimed_total":1e400,"line_items":[{"amount":1,"quantity":-1}]}}`,
		`{"data":{"claimed_total":-0.005,"line_items":[{"amount":"-0.005","quantity":"1e-18"}]}}`,
		`{"d\u0061ta":{"claimed_total":1,"line_items":[{"amount":1}]},"x":[{},[],"\"",true,false,null,-0.0e+1]}`,
		`{"data":{"claimed_total":1,"line_items":[{"amount":1},]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		r := FinanceGuard(payload)
		checkFinanceCheck(t, payload, r)
		if r.Engine != EngineFinance {
			t.Fatalf("engine %q", r.Engine)
		}
		if r.Problem != nil {
			if !r.Blocked || r.Code != r.Problem.Code || !slices.Contains(problemCodes, r.Code) {
				t.Fatalf("refusal %+v", r)
			}
			return
		}
		if r.Blocked != (r.Code == CodeFinanceMismatch) || (r.Code != "" && r.Code != CodeFinanceMismatch) {
			t.Fatalf("result %+v", r)
		}
		if !json.Valid(payload) {
			t.Fatalf("the guard accepted invalid JSON %q", payload)
		}
		claimed, computed, ok := refTotals(t, payload)
		if !ok {
			if r.Blocked || r.ClaimedTotal != "" || r.ComputedTotal != "" {
				t.Fatalf("no claim, yet %+v", r)
			}
			return
		}
		if r.ClaimedTotal != claimed || r.ComputedTotal != computed {
			t.Fatalf("totals %s, %s; the oracle says %s, %s", r.ClaimedTotal, r.ComputedTotal, claimed, computed)
		}
	})
}

// FuzzLogicGuard checks that LogicGuard never panics and finds exactly the
// contradictions a slow oracle finds.
func FuzzLogicGuard(f *testing.F) {
	for _, s := range []string{
		`{"assertions":[{"claim":"budget_approved"},{"claim":"budget_approved","negated":true}]}`,
		`{"assertions":[{"claim":"b","negated":true},{"claim":"a"},{"claim":"b"},{"claim":"a","negated":true}],"dsl":"(NOT a)"}`,
		`{"assertions":[{"negated":true},{}]}`,
		`{"assertions":[{"claim":"it's \"x\"\n"},{"claim":"it's \"x\"\n","negated":true}]}`,
		`{"assertions":[{"claim":1}]}`, `{"assertions":{}}`, `{"dsl":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		r := LogicGuard(payload)
		if r.Problem != nil {
			if !r.Blocked || r.Code != r.Problem.Code {
				t.Fatalf("refusal %+v", r)
			}
			return
		}
		// Member names are exact (as a Python dict reads them), so the
		// oracle decodes maps, not a struct (which would match any case).
		var v map[string]any
		if err := json.Unmarshal(payload, &v); err != nil {
			t.Fatalf("the guard accepted %q, encoding/json refuses it: %v", payload, err)
		}
		pos, neg := map[string]bool{}, map[string]bool{}
		list, _ := v["assertions"].([]any)
		for _, a := range list {
			a := a.(map[string]any)
			claim, _ := a["claim"].(string)
			if negated, _ := a["negated"].(bool); negated {
				neg[claim] = true
			} else {
				pos[claim] = true
			}
		}
		var want []string
		for c := range pos {
			if neg[c] {
				want = append(want, c)
			}
		}
		slices.Sort(want)
		if !slices.Equal(r.Contradictions, want) || r.Blocked != (len(want) > 0) {
			t.Fatalf("contradictions %q, the oracle says %q", r.Contradictions, want)
		}
	})
}

// FuzzCodeGuard checks that CodeGuard never panics, lists sorted pattern
// names, blocks exactly when one matches, and ignores the case of ASCII
// code.
func FuzzCodeGuard(f *testing.F) {
	for _, s := range []string{
		`eval("1+1")`, `import subprocess as sp`, `from os import system`, `print("evaluate")`,
		`__import__('subprocess')`, `re.compile("x")`, `compile(s, "f", "exec")`, `importlib.util`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		r := CodeGuard(code)
		if r.Problem != nil {
			if len(code) <= MaxCodeBytes {
				t.Fatalf("refused %d bytes: %+v", len(code), r)
			}
			return
		}
		if !slices.IsSorted(r.Patterns) || r.Blocked != (len(r.Patterns) > 0) {
			t.Fatalf("result %+v", r)
		}
		ascii := true
		for _, c := range code {
			if c > unicode.MaxASCII {
				ascii = false
				break
			}
		}
		if ascii {
			if u := CodeGuard(strings.ToUpper(code)); !slices.Equal(u.Patterns, r.Patterns) {
				t.Fatalf("upper case: %v, lower: %v", u.Patterns, r.Patterns)
			}
		}
	})
}

// FuzzBucket checks the token bucket against its contract over a run of
// takes: from a full bucket, the takes granted by a time never exceed the
// burst plus what the rate refilled since the first take (exactly, in
// TokenUnit units); a refusal's retry after is exact (a take a
// nanosecond earlier is refused, one then is granted); time running
// backwards mints nothing.
func FuzzBucket(f *testing.F) {
	f.Add(int64(60), int64(60), []byte{0, 0, 0, 1, 255, 3, 0, 0})
	f.Add(int64(7), int64(1), []byte{9, 9, 9, 200, 0, 100})
	f.Add(int64(0), int64(-3), []byte{1, 2, 3})
	f.Add(int64(1_000_000), int64(1_000_000), []byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, rate, burst int64, steps []byte) {
		r, bu := clampRate(rate, burst)
		t0 := time.Date(2026, 3, 26, 0, 0, 0, 0, time.UTC)
		now, first := t0, t0
		var b Bucket
		granted := int64(0)
		for i, step := range steps {
			// A step moves the time by step² milliseconds; every 7th
			// step moves it back.
			d := time.Duration(step) * time.Duration(step) * time.Millisecond
			if i%7 == 6 {
				d = -d
			}
			now = now.Add(d)
			before := b
			ok, wait := b.Take(now, rate, burst)
			if b.Last < before.Last {
				t.Fatalf("Last moved back from %d to %d", before.Last, b.Last)
			}
			if !ok {
				if wait <= 0 || b.Spent != max(before.Spent-max(now.UnixNano()-before.Last, 0)*r, 0) && now.UnixNano() > before.Last {
					t.Fatalf("refusal: wait %v, bucket %+v from %+v", wait, b, before)
				}
				early, on := b, b
				if ok, _ := early.Take(now.Add(wait-1), rate, burst); ok && wait > 1 {
					t.Fatalf("a token back before the retry after %v", wait)
				}
				if ok, _ := on.Take(now.Add(wait), rate, burst); !ok {
					t.Fatalf("no token back after the retry after %v", wait)
				}
				continue
			}
			granted++
			elapsed := max(time.Unix(0, b.Last).Sub(first), 0)
			// granted·TokenUnit <= burst·TokenUnit + rate·elapsed, in big
			// integers (rate·elapsed overflows an int64 past 2.5 hours at
			// the largest rate).
			lhs := new(big.Int).Mul(big.NewInt(granted), big.NewInt(TokenUnit))
			rhs := new(big.Int).Mul(big.NewInt(r), big.NewInt(int64(elapsed)))
			rhs.Add(rhs, new(big.Int).Mul(big.NewInt(bu), big.NewInt(TokenUnit)))
			if lhs.Cmp(rhs) > 0 {
				t.Fatalf("%d takes granted in %v at %d/min, burst %d", granted, elapsed, r, bu)
			}
		}
	})
}

// checkFinanceCheck checks that FinanceCheck returns r, FinanceGuard's
// result on payload, less the totals of a forwarded payload, and that a
// blocked payload's totals are those its reason names.
func checkFinanceCheck(t *testing.T, payload []byte, r Result) {
	t.Helper()
	want := r
	if !r.Blocked {
		want.ClaimedTotal, want.ComputedTotal = "", ""
	}
	if got := FinanceCheck(payload); !reflect.DeepEqual(got, want) {
		t.Fatalf("FinanceCheck(%s) = %+v, want %+v", payload, got, want)
	}
	if r.Blocked && r.Problem == nil && r.Reason != "Mathematical hallucination detected: claimed_total="+r.ClaimedTotal+", computed_total="+r.ComputedTotal {
		t.Fatalf("reason %q, totals %s, %s", r.Reason, r.ClaimedTotal, r.ComputedTotal)
	}
}
