package fact

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// TestSeed002_5_1_FactIncludeProof: include_proof returns the context's
// sentences and the facts read from each cited sentence; without it there
// is no proof, and the result is the same either way.
func TestSeed002_5_1_FactIncludeProof(t *testing.T) {
	params := json.RawMessage(`{"context":"France is a country in Europe. Its capital city is Paris, known for the Eiffel Tower. Paris had 2,102,650 inhabitants in 2023."}`)
	for _, tc := range []struct {
		claim  string
		status engines.Status
		cited  int
		entity string
		number string
	}{
		{"Paris is the capital of France", engines.Verified, 1, "paris", ""},
		{"Paris had 3,000,000 inhabitants in 2023", engines.Failed, 2, "paris", "2102650 inhabitant"},
	} {
		with := New().Verify(context.Background(), engines.Request{Query: tc.claim, Type: "fact", Params: params, IncludeProof: true})
		without := New().Verify(context.Background(), engines.Request{Query: tc.claim, Type: "fact", Params: params})
		if with.Status != tc.status || without.Status != tc.status || without.Proof != nil {
			t.Fatalf("%q: status %s/%s, proof without include_proof %v", tc.claim, with.Status, without.Status, without.Proof)
		}
		a, _ := json.Marshal(with.Result)
		b, _ := json.Marshal(without.Result)
		if string(a) != string(b) {
			t.Fatalf("%q: include_proof changed the result:\n%s\n%s", tc.claim, a, b)
		}
		p, ok := with.Proof.(Proof)
		if !ok || len(p.Sentences) != 3 || p.Method == "" {
			t.Fatalf("%q: proof %#v", tc.claim, with.Proof)
		}
		i := slices.IndexFunc(p.Evidence, func(e EvidenceFacts) bool { return e.Index == tc.cited })
		if i < 0 {
			t.Fatalf("%q: sentence %d is not in the proof's evidence: %+v", tc.claim, tc.cited, p.Evidence)
		}
		f := p.Evidence[i].Facts
		if f.Text != p.Sentences[tc.cited] || !slices.Contains(f.Entities, tc.entity) {
			t.Fatalf("%q: facts %+v of sentence %q", tc.claim, f, p.Sentences[tc.cited])
		}
		if tc.number != "" && !slices.ContainsFunc(f.Numbers, func(n string) bool { return n == tc.number }) {
			t.Fatalf("%q: numbers %v lack %s", tc.claim, f.Numbers, tc.number)
		}
	}
}
