package fact

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
)

// seedContext is the context of the QWED protocol v1.0 §5.2.4.
const seedContext = "France is a country in Europe. Its capital city is Paris, known for the Eiffel Tower."

const richContext = seedContext + ` The Eiffel Tower is 330 metres tall and was completed on March 31, 1889.
Paris has 2.1 million residents. Dr. Smith said the museum is not open on Mondays.
Germany's capital is Berlin. The company reported revenue of $4.5 billion in 2023.
Inflation in the U.S. reached 9.1% in June 2022. Berlin might host the 2036 Olympics.
Is Lyon the capital of France? The treaty was signed on 2019-06-28 in Versailles.`

func check(q, ctx string) engines.Outcome {
	p, _ := json.Marshal(Params{Context: ctx})
	return New().Verify(context.Background(), engines.Request{Query: q, Type: "fact", Params: p})
}

// TestSeed002_5_2_4_FactSeedExample pins the seed's example: VERIFIED with
// the evidence sentence.
func TestSeed002_5_2_4_FactSeedExample(t *testing.T) {
	out := check("Paris is the capital of France", seedContext)
	if out.Status != engines.Verified {
		t.Fatalf("%s %+v", out.Status, out.Result)
	}
	res := out.Result.(Result)
	if !res.IsValid || res.Evidence == nil || res.Evidence.Index != 1 || !strings.Contains(res.Evidence.Sentence, "Its capital city is Paris") {
		t.Fatalf("%+v", res)
	}
}

// TestSeed002_4_1_FactClaims pins supported, contradicted and unsettled
// claims against a richer context.
func TestSeed002_4_1_FactClaims(t *testing.T) {
	cases := []struct {
		name     string
		claim    string
		status   engines.Status
		expected string // Result.Expected for FAILED
		evidence int    // evidence sentence index (-1: none checked)
	}{
		{"seed example", "Paris is the capital of France", engines.Verified, "", 1},
		{"negated claim contradicted", "Paris is not the capital of France", engines.Failed, "affirmed", 1},
		{"contraction negation", "Paris isn't the capital of France", engines.Failed, "affirmed", 1},
		{"other city not settled", "Lyon is the capital of France", engines.Unsupported, "", -1},
		{"question in context settles nothing", "Lyon is the capital of France", engines.Unsupported, "", -1},
		{"number with unit", "The Eiffel Tower is 330 metres tall", engines.Verified, "", 2},
		{"unit synonym", "The Eiffel Tower is 330 meters tall", engines.Verified, "", 2},
		{"wrong number", "The Eiffel Tower is 300 metres tall", engines.Failed, "330 m", 2},
		{"date two formats", "The Eiffel Tower was completed on 31 March 1889", engines.Verified, "", 2},
		{"date month precision", "The Eiffel Tower was completed in March 1889", engines.Verified, "", 2},
		{"wrong date", "The Eiffel Tower was completed on April 1, 1889", engines.Failed, "1889-03-31", 2},
		{"wrong year", "The Eiffel Tower was completed in 1890", engines.Failed, "1889", 2},
		{"scaled number equals plain", "Paris has 2,100,000 residents", engines.Verified, "", 3},
		{"scaled number wrong", "Paris has 3 million residents", engines.Failed, "2100000 resident", 3},
		{"approximate claim not settled", "Paris has about 2 million residents", engines.Unsupported, "", -1},
		{"reported speech settles nothing", "The museum is not open on Mondays", engines.Unsupported, "", -1},
		{"possessive entity", "Berlin is the capital of Germany", engines.Verified, "", 5},
		{"currency", "The company reported revenue of $4.5 billion in 2023", engines.Verified, "", 6},
		{"currency wrong amount", "The company reported revenue of $5 billion in 2023", engines.Failed, "4500000000 USD", 6},
		{"percent and dotted abbreviation", "Inflation in the U.S. reached 9.1% in June 2022", engines.Verified, "", 7},
		{"percent wrong", "Inflation in the U.S. reached 8.5% in June 2022", engines.Failed, "9.1 percent", 7},
		{"hedged context does not verify", "Berlin will host the 2036 Olympics", engines.Unsupported, "", -1},
		{"hedged claim matches hedged context", "Berlin might host the 2036 Olympics", engines.Verified, "", 8},
		{"iso date", "The treaty was signed on 2019-06-28 in Versailles", engines.Verified, "", 10},
		{"iso date vs long form", "The treaty was signed on June 28, 2019", engines.Verified, "", 10},
		{"iso date wrong day", "The treaty was signed on June 29, 2019", engines.Failed, "2019-06-28", 10},
		{"entity spread over sentences", "Paris is the capital of Germany", engines.Unsupported, "", -1},
		{"word overlap alone", "the capital city is known", engines.Unsupported, "", -1},
		{"predicate missing", "Paris is the largest city of France", engines.Unsupported, "", -1},
		{"preposition predicate", "France is in Europe", engines.Verified, "", 0},
		{"two sentences both supported", "France is in Europe. Berlin is the capital of Germany.", engines.Verified, "", 0},
		{"second sentence contradicted", "France is in Europe. The Eiffel Tower is 300 metres tall.", engines.Failed, "330 m", 2},
		{"claim is a question", "Is Paris the capital of France?", engines.Unsupported, "", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := check(tc.claim, richContext)
			res := out.Result.(Result)
			if out.Status != tc.status {
				b, _ := json.Marshal(res)
				t.Fatalf("status %s, want %s: %s", out.Status, tc.status, b)
			}
			if res.IsValid != (tc.status == engines.Verified) {
				t.Fatalf("is_valid %v with %s", res.IsValid, out.Status)
			}
			if tc.expected != "" && res.Expected != tc.expected {
				t.Fatalf("expected %q, want %q (%s)", res.Expected, tc.expected, res.Message)
			}
			if tc.evidence >= 0 && (res.Evidence == nil || res.Evidence.Index != tc.evidence) {
				t.Fatalf("evidence %+v, want sentence %d", res.Evidence, tc.evidence)
			}
			if tc.status != engines.Verified && res.Message == "" {
				t.Fatal("no reason")
			}
			if tc.status == engines.Unsupported && (out.Err == nil || !strings.HasPrefix(res.Message, "the context does not settle it")) {
				t.Fatalf("unsupported without the reason: %+v", out)
			}
		})
	}
}

// TestFactNeverVerifiesOnOverlapAlone: a claim that shares every word with
// a sentence but names no entity, number or date is not verified, and a
// claim whose entities appear only in different sentences is not either.
func TestFactNeverVerifiesOnOverlapAlone(t *testing.T) {
	if out := check("the sky is blue", "The sky is blue."); out.Status != engines.Unsupported {
		t.Fatalf("overlap: %s", out.Status)
	}
	if out := check("Alice met Bob", "Alice was here. Bob met nobody."); out.Status != engines.Unsupported {
		t.Fatalf("spread entities: %s", out.Status)
	}
}

// TestFactSupportedAndContradicted: a self-contradicting context settles
// nothing; both sentences are cited.
func TestFactSupportedAndContradicted(t *testing.T) {
	out := check("The bridge is 100 metres long", "The bridge is 100 metres long. The bridge is 120 metres long.")
	res := out.Result.(Result)
	if out.Status != engines.Unsupported || res.Parts[0].Evidence == nil || res.Parts[0].Conflict == nil {
		t.Fatalf("%s %+v", out.Status, res)
	}
}

// TestFactSentenceSplitting pins abbreviations, initials and decimals.
func TestFactSentenceSplitting(t *testing.T) {
	got := splitSentences("Dr. Smith met J. R. Jones in the U.S. on Jan. 5. It cost 2.5 million. Done!\n\nNext para")
	want := []string{"Dr. Smith met J. R. Jones in the U.S. on Jan. 5.", "It cost 2.5 million.", "Done!", "Next para"}
	if !slices.Equal(got, want) {
		t.Fatalf("%q", got)
	}
}

// TestSeed002_8_3_FactRequestErrors pins the §8 codes of bad requests.
func TestSeed002_8_3_FactRequestErrors(t *testing.T) {
	cases := []struct {
		name string
		q    string
		p    string
		code string
	}{
		{"no params", "Paris is nice", "", "QWED-REQ-002"},
		{"no context", "Paris is nice", `{}`, "QWED-REQ-002"},
		{"blank context", "Paris is nice", `{"context":"  "}`, "QWED-REQ-002"},
		{"context wrong type", "Paris is nice", `{"context":["a"]}`, "QWED-REQ-001"},
		{"unknown field", "Paris is nice", `{"context":"a","source":"b"}`, "QWED-REQ-001"},
		{"empty claim", " ", `{"context":"a"}`, "QWED-REQ-002"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := json.Marshal(json.RawMessage(tc.p))
			if tc.p == "" {
				p = nil
			}
			out := New().Verify(context.Background(), engines.Request{Query: tc.q, Params: p})
			if out.Status != engines.Error || out.Err == nil || out.Err.Code != tc.code {
				t.Fatalf("got %s %+v, want %s", out.Status, out.Err, tc.code)
			}
		})
	}
}

// TestFactLimits pins every limit on both sides.
func TestFactLimits(t *testing.T) {
	isLimit := func(out engines.Outcome) bool {
		return out.Status == engines.Error && out.Err != nil && out.Err.Code == "QWED-REQ-004"
	}
	// context bytes
	at := seedContext + strings.Repeat(" ", MaxContextBytes-len(seedContext))
	if out := check("Paris is the capital of France", at); out.Status != engines.Verified {
		t.Fatalf("at MaxContextBytes: %s %+v", out.Status, out.Err)
	}
	if out := check("Paris is the capital of France", at+" "); !isLimit(out) {
		t.Fatalf("over MaxContextBytes: %s", out.Status)
	}
	// sentences
	sents := strings.Repeat("A b. ", MaxSentences-2) + seedContext
	if out := check("Paris is the capital of France", sents); out.Status != engines.Verified {
		t.Fatalf("at MaxSentences: %s %+v", out.Status, out.Err)
	}
	if out := check("Paris is the capital of France", "A b. "+sents); !isLimit(out) {
		t.Fatalf("over MaxSentences: %s", out.Status)
	}
	// sentence tokens: "Paris is the capital of France" is 6 tokens
	long := "Paris is the capital of France" + strings.Repeat(" x", MaxSentenceTokens-6)
	if out := check("Paris is the capital of France", long); out.Status != engines.Verified {
		t.Fatalf("at MaxSentenceTokens: %s %+v", out.Status, out.Err)
	}
	if out := check("Paris is the capital of France", long+" x"); !isLimit(out) {
		t.Fatalf("over MaxSentenceTokens: %s", out.Status)
	}
	// claim sentences
	claim := strings.Repeat("France is in Europe. ", MaxClaimSentences)
	if out := check(claim, seedContext); out.Status != engines.Verified {
		t.Fatalf("at MaxClaimSentences: %s %+v", out.Status, out.Err)
	}
	if out := check(claim+"France is in Europe.", seedContext); !isLimit(out) {
		t.Fatalf("over MaxClaimSentences: %s", out.Status)
	}
	if out := check(strings.Repeat("a", engines.MaxQueryBytes+1), seedContext); !isLimit(out) {
		t.Fatalf("over MaxQueryBytes: %s", out.Status)
	}
}

// TestFactDeterminism: the same request gives byte-identical outcomes.
func TestFactDeterminism(t *testing.T) {
	for _, q := range []string{"Paris is the capital of France", "The Eiffel Tower is 300 metres tall", "Lyon is the capital of France"} {
		a, _ := json.Marshal(check(q, richContext))
		for range 5 {
			b, _ := json.Marshal(check(q, richContext))
			if !bytes.Equal(a, b) {
				t.Fatalf("%q: %s != %s", q, a, b)
			}
		}
	}
}

// TestFactCapabilities: the §4.2 document is valid and names the limits.
func TestFactCapabilities(t *testing.T) {
	c := New().Capabilities()
	if c.EngineID != "fact" || c.Limits["max_context_bytes"] != MaxContextBytes || !json.Valid(c.Params) {
		t.Fatalf("%+v", c)
	}
}

// FuzzParseFact: splitting, tokenising and judging never panic, and a
// VERIFIED answer always cites a sentence.
func FuzzParseFact(f *testing.F) {
	f.Add("Paris is the capital of France", seedContext)
	f.Add("It cost $4.5 billion on March 5, 2024.", "Its cost was $4.5 billion on 5 March 2024. It's 1,000,000%.")
	f.Add("U.S. e.g. 2019-13-40", "no. 5th")
	f.Fuzz(func(t *testing.T, claim, ctx string) {
		out := check(claim, ctx)
		if out.Status == engines.Error && out.Err == nil {
			t.Fatal("error without a problem")
		}
		if out.Status == engines.Verified && out.Result.(Result).Evidence == nil {
			t.Fatal("verified without evidence")
		}
	})
}

func BenchmarkVerify_SeedExample(b *testing.B) {
	benchFact(b, "Paris is the capital of France", seedContext)
}

func BenchmarkVerify_RichContext(b *testing.B) {
	benchFact(b, "The Eiffel Tower is 300 metres tall", strings.Repeat(richContext+" ", 20))
}

func benchFact(b *testing.B, q, ctx string) {
	p, _ := json.Marshal(Params{Context: ctx})
	e := New()
	req := engines.Request{Query: q, Type: "fact", Params: p}
	durs := make([]time.Duration, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		e.Verify(context.Background(), req)
		durs = append(durs, time.Since(t0))
	}
	slices.Sort(durs)
	if len(durs) > 0 {
		b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
	}
}
