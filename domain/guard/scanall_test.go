package guard

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// QWED-Agent spec v1.1 §5.2 no_pii_leakage: Scan stops at MaxPIIFindings,
// so sixteen addresses hid a card number after them; with ScanMode.All,
// ScanWith and ScanJSONWith read on and report the first finding of each
// kind past the bound, staying bounded, strict or not.
func TestAgentSpec_5_2_ScanAllFindsEveryKindPastTheBound(t *testing.T) {
	pad := strings.Repeat("a@example.com ", 40)
	text := pad + "card 4111 1111 1111 1111 and ssn 078-05-1120 " + pad
	kinds := func(fs []PIIFinding) []string {
		var out []string
		for _, f := range fs {
			if !slices.Contains(out, f.Kind) {
				out = append(out, f.Kind)
			}
		}
		return out
	}
	if k := kinds(Scan(text)); !slices.Equal(k, []string{PIIEmail}) {
		t.Fatalf("Scan kinds %v: the bound was expected to stop it", k)
	}
	for _, strict := range []bool{false, true} {
		all := ScanWith(text, ScanMode{Strict: strict, All: true})
		if k := kinds(all); !slices.Equal(k, []string{PIIEmail, PIICard, PIISSN}) || len(all) != MaxPIIFindings+2 {
			t.Fatalf("ScanWith(strict %v, all): %d findings, kinds %v; want the card and the SSN past the bound", strict, len(all), k)
		}
	}
	doc, _ := json.Marshal(map[string]any{"a": strings.Fields(pad), "b": "key AKIAIOSFODNN7EXAMPLE"})
	js := ScanJSONWith(doc, ScanMode{Strict: true, All: true})
	if k := kinds(js); !slices.Equal(k, []string{PIIEmail, PIISecret}) || js[len(js)-1].Where != "/b" {
		t.Fatalf("ScanJSONWith(all): %+v; want the secret at /b past the bound", js[len(js)-1])
	}
	if k := kinds(ScanJSON(doc)); slices.Contains(k, PIISecret) {
		t.Fatalf("ScanJSON kinds %v: the bound was expected to stop it", k)
	}
}
