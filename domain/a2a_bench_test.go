package domain

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/a2a"
)

// constSigner signs every verdict with one token: the benchmark measures
// Decide, not ES256 (handlers/attest's benchmarks measure the signature).
type constSigner struct{}

func (constSigner) Sign(AttestationClaims) (string, error) { return "att", nil }
func (constSigner) SignA2A(a2a.Claims) (string, error)     { return "a2a", nil }

// BenchmarkDecideA2A measures Decide of one AgentMessage on a warm state
// (a boundary trusting both agents, strict mode, the pair's bucket
// holding tokens, a caller-supplied trace id), forwarded every iteration:
//
//	passthrough: a general payload ({"message":"Hello!"})
//	finance10:   a financial_transaction of 10 line items whose total holds
//
// Decide only: the state is not changed (the bucket is taken on a copy).
func BenchmarkDecideA2A(b *testing.B) {
	g := newGate(b)
	g.signer = constSigner{}
	g.trustAll("procurement-agent", "treasury-agent")
	var items []string
	for i := range 10 {
		items = append(items, `{"description":"Widget `+strconv.Itoa(i)+`","amount":12.50,"quantity":`+strconv.Itoa(i+1)+`}`)
	}
	finance := `{"data":{"claimed_total":687.50,"line_items":[` + strings.Join(items, ",") + `]}}`
	g.exec(a2aMsg("procurement-agent", "treasury-agent", a2a.PayloadGeneral, `{}`)) // the pair's bucket exists
	run := func(b *testing.B, typ a2a.PayloadType, payload string, engine string) {
		cmd := a2aMsg("procurement-agent", "treasury-agent", typ, payload)
		cmd.Request = RequestID{Source: "bench", ID: "r"}
		cmd.A2A.TraceID = "bench_trace"
		env := Env{Now: g.now, Seq: 1000, Partition: 1, Signer: constSigner{}}
		if v := Decide(g.s, env, cmd).A2AVerdict; v == nil || v.Status != a2a.StatusForwarded || v.Engine != engine {
			b.Fatalf("verdict %+v", v)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if ev := Decide(g.s, env, cmd); ev.A2AVerdict.Status != a2a.StatusForwarded {
				b.Fatal(ev.A2AVerdict.Status)
			}
		}
	}
	b.Run("passthrough", func(b *testing.B) { run(b, a2a.PayloadGeneral, `{"message":"Hello!"}`, a2a.EnginePassthrough) })
	b.Run("finance10", func(b *testing.B) { run(b, a2a.PayloadFinancial, finance, a2a.EngineFinance) })
}
