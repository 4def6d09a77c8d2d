package a2a

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// tenItems is a financial payload of 10 line items (the Decide benchmark's
// finance case).
var tenItems = func() []byte {
	var b strings.Builder
	b.WriteString(`{"data":{"claimed_total":"295.05","line_items":[`)
	for i := range 10 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"description":"Widget %d","amount":%d.95,"quantity":%d}`, i, 10+i, 1+i%3)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}()

func BenchmarkFinanceGuard10Items(b *testing.B) {
	if r := FinanceGuard(tenItems); r.Blocked {
		b.Fatalf("FinanceGuard = %+v", r)
	}
	b.ReportAllocs()
	for b.Loop() {
		FinanceGuard(tenItems)
	}
}

func BenchmarkLogicGuard(b *testing.B) {
	payload := []byte(`{"assertions":[{"claim":"budget_approved"},{"claim":"vendor_verified"},{"claim":"over_limit","negated":true},{"claim":"budget_approved","negated":true}]}`)
	b.ReportAllocs()
	for b.Loop() {
		LogicGuard(payload)
	}
}

func BenchmarkCodeGuard(b *testing.B) {
	code := "import json\n\ndef total(items):\n    return sum(i['amount'] * i.get('quantity', 1) for i in items)\n\nprint(json.dumps({'total': total([])}))\n"
	b.ReportAllocs()
	for b.Loop() {
		CodeGuard(code)
	}
}

// decodeBenchMessage is the finance message of BenchmarkDecode.
var decodeBenchMessage = []byte(`{"sender_agent_id":"procurement-agent","receiver_agent_id":"treasury-agent","payload_type":"financial_transaction","payload":` +
	string(tenItems) + `,"trace_id":"demo_001"}`)

func BenchmarkDecode(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, p := Decode(decodeBenchMessage, 0); p != nil {
			b.Fatal(p)
		}
	}
}

// BenchmarkDecodeDigest is BenchmarkDecode with the payload digest the
// transports now record in the command (DecodeDigest).
func BenchmarkDecodeDigest(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, p := DecodeDigest(decodeBenchMessage, 0); p != nil {
			b.Fatal(p)
		}
	}
}

func BenchmarkPayloadDigest(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		PayloadDigest(tenItems)
	}
}

func BenchmarkBucketTake(b *testing.B) {
	t0 := time.Date(2026, 3, 26, 0, 0, 0, 0, time.UTC)
	var bk Bucket
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		bk.Take(t0.Add(time.Duration(i)*time.Second), 60, 60)
	}
}

// BenchmarkCodeGuard100KB is the worst case of code_guard on the Decide
// path: MaxCodeBytes of code dense with every pattern's words, none of
// them a match.
func BenchmarkCodeGuard100KB(b *testing.B) {
	unit := "eval x subprocess y system z popen w compile v importlib u exec t __import__ s from os import q\n"
	code := strings.Repeat(unit, MaxCodeBytes/len(unit))
	if r := CodeGuard(code); r.Blocked {
		b.Fatalf("CodeGuard = %v", r.Patterns)
	}
	b.SetBytes(int64(len(code)))
	b.ReportAllocs()
	for b.Loop() {
		CodeGuard(code)
	}
}
