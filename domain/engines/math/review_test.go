package math

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// The attacks of the calculus review (docs/ARCHITECTURE.md, "Review of the
// math engine's calculus"): each test pins a defect found and fixed.

// TestQWEDProtocol_Math_Integrate_LinearSystemBounded pins that the
// Horowitz–Ostrogradsky linear system is charged by the size of its
// rational entries: a 900-byte integrand whose denominator has degree 64
// and 20-digit coefficients took about 20 s of Gaussian elimination over
// big.Rat for an UNSUPPORTED answer; it is now QWED-REQ-004 naming a limit.
func TestQWEDProtocol_Math_Integrate_LinearSystemBounded(t *testing.T) {
	terms := make([]string, 33)
	for i := range terms {
		terms[i] = fmt.Sprintf("1%019d*x**%d", i*i*982451653+7*i, i)
	}
	q := "(x**32+1)/(" + strings.Join(terms, "+") + ")**2"
	o := verify(t, q, `{"operation":"integrate"}`)
	if o.Status != engines.Error || o.Err.Code != CodeTooLarge {
		t.Fatalf("status %s, err %+v; want ERROR %s", o.Status, o.Err, CodeTooLarge)
	}
	if l := o.Err.Details["limit"]; l != "max_work" && l != "max_digits" {
		t.Errorf("limit %v, want max_work or max_digits", l)
	}
}
