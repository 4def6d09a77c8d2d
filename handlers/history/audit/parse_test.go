package audit

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// TestParseUTCMatchesTimeParse: the fast time parser agrees with
// time.Parse on every form the JSON encoding of a UTC time takes, and
// declines the rest.
func TestParseUTCMatchesTimeParse(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for i := range 20000 {
		tm := time.Unix(r.Int64N(4e9), 0).UTC()
		switch i % 4 {
		case 1:
			tm = tm.Add(time.Duration(r.Int64N(1e9)))
		case 2:
			tm = tm.Add(time.Duration(r.Int64N(1000)) * time.Millisecond)
		case 3:
			tm = tm.Add(time.Duration(r.Int64N(1e6)) * time.Microsecond)
		}
		b, _ := tm.MarshalJSON()
		s := b[1 : len(b)-1]
		got, ok := parseUTC(s)
		if !ok || !got.Equal(tm) || got.Location() != time.UTC {
			t.Fatalf("parseUTC(%s) = %v %v, want %v", s, got, ok, tm)
		}
	}
	for _, s := range []string{"2026-02-30T00:00:00Z", "2026-11-24T10:00:00+01:00", "2026-11-24T10:00:00.Z",
		"2026-11-24T24:00:00Z", "2026-11-24 10:00:00Z", "2026-11-24T10:00:00.1234567891Z", "2026-1x-24T10:00:00Z"} {
		if _, ok := parseUTC([]byte(s)); ok {
			t.Errorf("parseUTC(%q) accepted", s)
		}
	}
}

// TestFastHeaderMatchesDecoder: the fast header reader and the JSON
// decoder agree on the gate's encoding, and other layouts still parse.
func TestFastHeaderMatchesDecoder(t *testing.T) {
	ev := &domain.Event{Seq: 42, Prev: "ab12", Partition: 3, Time: time.Date(2026, 11, 24, 9, 1, 2, 345000000, time.UTC),
		Type: domain.EvActionDecided, AgentID: "a"}
	b, _ := json.Marshal(ev)
	h, ok := fastHeader(b)
	if !ok || h.seq != 42 || string(h.prev) != "ab12" || h.partition != 3 || !h.time.Equal(ev.Time) || string(h.typ) != "action.decided" {
		t.Fatalf("fastHeader = %+v %v", h, ok)
	}
	reordered := []byte(`{"type":"action.decided","time":"2026-11-24T10:01:02.345+01:00","partition":3,"prev":"ab12","seq":42}`)
	h2, err := parseHeader(reordered)
	if err != nil || h2.seq != 42 || string(h2.prev) != "ab12" || !h2.time.Equal(ev.Time) {
		t.Fatalf("parseHeader(reordered) = %+v %v", h2, err)
	}
	for _, bad := range []string{`{}`, `{"seq":1}`, `not json`, `{"seq":1,"prev":"","time":"x","type":"t"}`} {
		if _, err := parseHeader([]byte(bad)); err == nil {
			t.Errorf("parseHeader(%s) accepted", bad)
		}
	}
}
