package eventjson

import (
	"reflect"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// withoutFoldSkips returns ev (decoded by DecodeEvent) with the members
// DecodeFoldEvent skips set to zero.
func withoutFoldSkips(ev *domain.Event) *domain.Event {
	ev.Error = nil
	if c := ev.Command; c != nil {
		c.TokenHash, c.Verify, c.Tool = "", nil, nil
	}
	if x := ev.Decided; x != nil {
		x.Verification, x.Error, x.RequestDigest = domain.Verification{}, nil, ""
		x.Budget, x.OutcomeDigest, x.CorrectedAction, x.CorrectedDigest = domain.BudgetRemaining{}, "", nil, ""
	}
	if x := ev.Executed; x != nil {
		x.Budget = domain.BudgetRemaining{}
	}
	return ev
}

// A fold's decoding is DecodeEvent's without the members a fold does not
// read, on every event of the recorded history and on events with every
// field set.
func TestFoldEventIsTheEventWithoutWhatAFoldSkips(t *testing.T) {
	payloads := readHistory(t)
	for _, ev := range fullEvents() {
		p, err := Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, p)
	}
	skipped := 0
	for _, p := range payloads {
		full, err := DecodeEvent(p)
		if err != nil {
			t.Fatalf("DecodeEvent(%s): %v", p, err)
		}
		got, err := DecodeFoldEvent(p)
		if err != nil {
			t.Fatalf("DecodeFoldEvent(%s): %v", p, err)
		}
		if !reflect.DeepEqual(full, got) {
			skipped++
		}
		if want := withoutFoldSkips(full); !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodeFoldEvent(%s)\n = %#v\nwant %#v", p, got, want)
		}
	}
	if skipped < len(payloads)/2 {
		t.Fatalf("only %d of %d events had members to skip", skipped, len(payloads))
	}
}

// What DecodeFoldEvent skips is still read as JSON: a payload broken
// inside a skipped member is refused, as DecodeEvent refuses it.
func TestFoldEventRefusesBrokenSkippedMembers(t *testing.T) {
	for _, p := range [][]byte{
		edit(t, `"verification":{`, `"verification":{{`),
		edit(t, `"budget_remaining":{`, `"budget_remaining":[`),
	} {
		if _, err := DecodeEvent(p); err == nil {
			t.Fatalf("DecodeEvent accepted %s", p)
		}
		if ev, err := DecodeFoldEvent(p); err == nil {
			t.Fatalf("DecodeFoldEvent accepted %s: %+v", p, ev)
		}
	}
}
