package domain

import (
	"testing"
)

// TestReview_AmountMemberInAnotherCase: a business decoding the request
// with Go's encoding/json (or any case-insensitive reader) matches member
// names without regard to case, Unicode simple folding included
// ("amount_centſ" is "amount_cents" to it): such a member would be the
// amount the business charges while the gate reads none (0) or another
// one, past every spending policy and the strict ceiling. Any member whose
// name folds to amount or amount_cents without being it is refused.
func TestReview_AmountMemberInAnotherCase(t *testing.T) {
	for _, c := range []struct{ body, field string }{
		{`{"AMOUNT_CENTS":99999}`, "request.amount_cents"},
		{`{"amount_cents":1,"Amount_Cents":5}`, "request.amount_cents"},
		{`{"amount_cent\u017f":77}`, "request.amount_cents"},
		{`{"Amount":"12"}`, "request.amount"},
		{`{"amount":"0.01","AMOUNT":"99"}`, "request.amount"},
	} {
		got, err := executeAmount([]byte(c.body), "USD")
		if err == nil || err.Code != CodeInvalidRequest || err.Details["field"] != c.field {
			t.Errorf("%s = %d, %+v; want a refusal of %s", c.body, got, err, c.field)
		}
	}
	g := newExecGate(t, ExecuteModeOpen, 100)
	refused(t, g.execute("shop", `{"Amount_Cents":5000}`, ""), CodeInvalidRequest, "")
	if len(g.s.Exec.Open) != 0 {
		t.Fatal("a refused amount opened a transaction")
	}
	// Members that merely resemble them are not amounts.
	for _, body := range []string{`{"amounts":5}`, `{"amount_cents_max":5}`, `{"total_amount":5}`} {
		if got, err := executeAmount([]byte(body), "USD"); err != nil || got != 0 {
			t.Errorf("%s = %d, %v; want 0", body, got, err)
		}
	}
}
