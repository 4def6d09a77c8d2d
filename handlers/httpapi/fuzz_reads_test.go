package httpapi

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// checkRejection checks that e is a well-formed recorded refusal: a JSON
// error body with a catalogue code, a message and a 4xx status.
func checkRejection(t *testing.T, what string, e *apiError) {
	t.Helper()
	var eb struct {
		Error domain.Error `json:"error"`
	}
	if err := json.Unmarshal(e.body(), &eb); err != nil {
		t.Fatalf("%s: error body %q is not JSON: %v", what, e.body(), err)
	}
	if !eb.Error.Code.Known() || eb.Error.Message == "" || e.status < 400 || e.status > 499 || !e.record {
		t.Fatalf("%s: error %+v status %d record %v", what, eb.Error, e.status, e.record)
	}
}

// FuzzParseActivityQuery pins the activity query's parser: an accepted
// query has from < to within MaxActivityPeriod and a limit in range; a
// refused one is a catalogue 4xx error.
func FuzzParseActivityQuery(f *testing.F) {
	for _, s := range []string{"", "from=2026-01-01", "from=2026-01-01&to=2026-02-01T00:00:00Z&limit=5&after_seq=9",
		"to=2020-01-01", "limit=0", "limit=x", "after_seq=-1", "from=2026-02-01&to=2026-01-01", "from=1900-01-01", "%zz"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return // net/http answers a malformed query itself
		}
		aq, e := parseActivityQuery(q, now)
		if e != nil {
			checkRejection(t, "activity "+raw, e)
			return
		}
		if !aq.from.Before(aq.to) || aq.to.Sub(aq.from) > MaxActivityPeriod || aq.limit < 1 || aq.limit > MaxListLimit {
			t.Fatalf("%q accepted as %+v", raw, aq)
		}
	})
}

// FuzzParseTransactionQuery pins the transaction reads' query parser: an
// accepted query names a known status and bounded identifiers, a limit
// in range and, for a summary, from < to within MaxSummaryPeriod; a
// refused one is a catalogue 4xx error.
func FuzzParseTransactionQuery(f *testing.F) {
	for _, s := range []string{"", "agent=a&business=b&category=c&status=completed", "from=2026-01-01&to=2026-02-01T00:00:00Z&limit=5",
		"status=lost", "limit=0", "agent=a&agent=b", "from=2026-02-01&to=2026-01-01", "from=1900-01-01", "period=week", "agent=%00"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string, summary bool) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		var def time.Duration
		if summary {
			def = DefaultSummaryPeriod
		}
		tq, e := parseTxQuery(q, now, def)
		if e != nil {
			checkRejection(t, "transactions "+raw, e)
			return
		}
		f := tq.filter
		ok := tq.limit >= 1 && tq.limit <= MaxListLimit && len(f.Agent) <= MaxPathIDBytes && len(f.Business) <= MaxPathIDBytes && len(f.Category) <= MaxPathIDBytes
		if f.Status != "" {
			known := false
			for _, s := range txStatuses {
				known = known || s == f.Status
			}
			ok = ok && known
		}
		if summary {
			ok = ok && f.From.Before(f.To) && f.To.Sub(f.From) <= MaxSummaryPeriod
		} else if !f.From.IsZero() && !f.To.IsZero() {
			ok = ok && f.From.Before(f.To)
		}
		if !ok {
			t.Fatalf("%q accepted as %+v", raw, tq)
		}
	})
}
