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

// a2aHotCase is one message of BenchmarkDecideA2A, with the state and
// environment it is decided in.
type a2aHotCase struct {
	name, engine string
	g            *gate
	env          Env
	cmd          *Command
}

// a2aHotCases sets up BenchmarkDecideA2A's messages on a warm state (a
// boundary trusting both agents, strict mode, the pair's bucket holding
// tokens, a caller-supplied trace id), each forwarded:
//
//	passthrough: a general payload ({"message":"Hello!"})
//	finance10:   a financial_transaction of 10 line items whose total holds
//
// and each again as the transports send it (name + "-digested"), with the
// payload digest their stage 0 computed (Command.A2ADigest), which Decide
// then does not compute; without it, as recorded before it existed.
func a2aHotCases(tb testing.TB) []a2aHotCase {
	g := newGate(tb)
	g.signer = constSigner{}
	g.trustAll("procurement-agent", "treasury-agent")
	var items []string
	for i := range 10 {
		items = append(items, `{"description":"Widget `+strconv.Itoa(i)+`","amount":12.50,"quantity":`+strconv.Itoa(i+1)+`}`)
	}
	finance := `{"data":{"claimed_total":687.50,"line_items":[` + strings.Join(items, ",") + `]}}`
	g.exec(a2aMsg("procurement-agent", "treasury-agent", a2a.PayloadGeneral, `{}`)) // the pair's bucket exists
	mk := func(name string, typ a2a.PayloadType, payload, engine string, digested bool) a2aHotCase {
		cmd := a2aMsg("procurement-agent", "treasury-agent", typ, payload)
		cmd.Request = RequestID{Source: "bench", ID: "r"}
		cmd.A2A.TraceID = "bench_trace"
		if digested {
			name += "-digested"
			d, err := a2a.PayloadDigest(cmd.A2A.Payload)
			if err != nil {
				tb.Fatal(err)
			}
			cmd.A2ADigest = d
		}
		c := a2aHotCase{name: name, engine: engine, g: g, cmd: cmd, env: Env{Now: g.now, Seq: 1000, Partition: 1, Signer: constSigner{}}}
		if v := Decide(g.s, c.env, cmd).A2AVerdict; v == nil || v.Status != a2a.StatusForwarded || v.Engine != engine {
			tb.Fatalf("%s: verdict %+v", name, v)
		}
		return c
	}
	return []a2aHotCase{
		mk("passthrough", a2a.PayloadGeneral, `{"message":"Hello!"}`, a2a.EnginePassthrough, false),
		mk("finance10", a2a.PayloadFinancial, finance, a2a.EngineFinance, false),
		mk("passthrough", a2a.PayloadGeneral, `{"message":"Hello!"}`, a2a.EnginePassthrough, true),
		mk("finance10", a2a.PayloadFinancial, finance, a2a.EngineFinance, true),
	}
}

// BenchmarkDecideA2A measures Decide of one AgentMessage of a2aHotCases,
// forwarded every iteration. Decide only: the state is not changed (the
// bucket is taken on a copy).
func BenchmarkDecideA2A(b *testing.B) {
	for _, c := range a2aHotCases(b) {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if ev := Decide(c.g.s, c.env, c.cmd); ev.A2AVerdict.Status != a2a.StatusForwarded {
					b.Fatal(ev.A2AVerdict.Status)
				}
			}
		})
	}
}
