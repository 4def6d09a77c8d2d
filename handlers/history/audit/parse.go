package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// header holds the leading fields of an event; prev and typ alias the
// payload (valid while it is).
type header struct {
	seq       uint64
	prev      []byte
	partition int32
	time      time.Time
	typ       []byte
}

// parseHeader reads seq, prev, partition, time and type from an encoded
// event. The gate encodes them first and in this order
// (`{"seq":1,"prev":"…","partition":0,"time":"…","type":"…",`), which is
// read without a JSON decoder; any other layout is decoded in full.
func parseHeader(p []byte) (header, error) {
	if h, ok := fastHeader(p); ok {
		return h, nil
	}
	var ev struct {
		Seq       *uint64    `json:"seq"`
		Prev      *string    `json:"prev"`
		Partition int32      `json:"partition"`
		Time      *time.Time `json:"time"`
		Type      string     `json:"type"`
	}
	if err := json.Unmarshal(p, &ev); err != nil {
		return header{}, err
	}
	if ev.Seq == nil || ev.Prev == nil || ev.Time == nil || ev.Type == "" {
		return header{}, errors.New("seq, prev, time or type missing")
	}
	return header{seq: *ev.Seq, prev: []byte(*ev.Prev), partition: ev.Partition, time: ev.Time.UTC(), typ: []byte(ev.Type)}, nil
}

// fastHeader parses the gate's own layout; false means "decode in full".
func fastHeader(p []byte) (header, bool) {
	var h header
	rest, ok := bytes.CutPrefix(p, []byte(`{"seq":`))
	if !ok {
		return h, false
	}
	var num []byte
	if num, rest, ok = cutNumber(rest); !ok {
		return h, false
	}
	seq, err := strconv.ParseUint(string(num), 10, 64)
	if err != nil {
		return h, false
	}
	h.seq = seq
	var s []byte
	if s, rest, ok = cutString(rest, `,"prev":"`); !ok {
		return h, false
	}
	h.prev = s
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"partition":`)); !ok {
		return h, false
	}
	if num, rest, ok = cutNumber(rest); !ok {
		return h, false
	}
	part, err := strconv.ParseInt(string(num), 10, 32)
	if err != nil {
		return h, false
	}
	h.partition = int32(part)
	if s, rest, ok = cutString(rest, `,"time":"`); !ok {
		return h, false
	}
	if h.time, ok = parseUTC(s); !ok {
		if h.time, err = time.Parse(time.RFC3339Nano, string(s)); err != nil {
			return h, false
		}
		h.time = h.time.UTC()
	}
	if s, _, ok = cutString(rest, `,"type":"`); !ok {
		return h, false
	}
	h.typ = s
	return h, true
}

// parseUTC parses the form time.Time's JSON encoding gives a UTC time,
// "2006-01-02T15:04:05[.fraction]Z", without time.Parse's generality;
// false for anything else (then time.Parse decides).
func parseUTC(b []byte) (time.Time, bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[len(b)-1] != 'Z' {
		return time.Time{}, false
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for _, c := range b[i : i+n] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	hh, ok4 := num(11, 2)
	mi, ok5 := num(14, 2)
	ss, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || hh > 23 || mi > 59 || ss > 59 {
		return time.Time{}, false
	}
	ns := 0
	if frac := b[19 : len(b)-1]; len(frac) > 0 {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return time.Time{}, false
		}
		v, ok := num(20, len(frac)-1)
		if !ok {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			v *= 10
		}
		ns = v
	}
	t := time.Date(y, time.Month(mo), d, hh, mi, ss, ns, time.UTC)
	if t.Day() != d { // 31 April and the like
		return time.Time{}, false
	}
	return t, true
}

// cutNumber cuts a run of ASCII digits (and a leading minus).
func cutNumber(b []byte) (num, rest []byte, ok bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == 0 || (i == 1 && b[0] == '-') {
		return nil, b, false
	}
	return b[:i], b[i:], true
}

// cutString cuts prefix and then a JSON string body without escapes up to
// its closing quote; a string with an escape is left to the decoder.
func cutString(b []byte, prefix string) (s, rest []byte, ok bool) {
	b, ok = bytes.CutPrefix(b, []byte(prefix))
	if !ok {
		return nil, b, false
	}
	for i, c := range b {
		switch {
		case c == '"':
			return b[:i], b[i+1:], true
		case c == '\\' || c < 0x20:
			return nil, b, false
		}
	}
	return nil, b, false
}

// mayHoldAttestation reports whether an event of type typ may carry an
// attestation; a cheap byte search spares decoding the others.
func mayHoldAttestation(typ []byte, p []byte) bool {
	switch domain.EventType(typ) {
	case domain.EvActionDecided:
		return bytes.Contains(p, []byte(`"attestation":"`))
	case domain.EvQWEDVerified:
		return bytes.Contains(p, []byte(`"attestations":[`))
	}
	return false
}

// attestations verifies every attestation of the event in r (rule 5).
func (v *verifier) attestations(c *chain, r Record) error {
	ev := new(domain.Event)
	if err := json.Unmarshal(r.Payload, ev); err != nil {
		return &Break{Partition: r.Partition, Seq: r.Seq, Offset: r.Offset, Kind: KindMalformed,
			Detail: "the event does not decode: " + err.Error()}
	}
	fail := func(what string, err error) error {
		return &Break{Partition: r.Partition, Seq: ev.Seq, Offset: r.Offset, Kind: KindAttestation,
			Detail: what + ": " + err.Error()}
	}
	if d := ev.Decided; d != nil && d.Attestation != "" {
		cl, err := v.keys.VerifyRecord(d.Attestation)
		if err != nil {
			return fail("the attestation does not verify", err)
		}
		want := fmt.Sprintf("seq %d partition %d jti %s decision %s agent %s digest %s iat %d",
			ev.Seq, ev.Partition, d.ActionID, d.Decision, ev.AgentID, d.RequestDigest, ev.Time.Unix())
		got := fmt.Sprintf("seq %d partition %d jti %s decision %s agent %s digest %s iat %d",
			cl.Seq, cl.Partition, cl.ID, cl.Decision, cl.AgentID, cl.RequestDigest, cl.IssuedAt)
		if want != got {
			return &Break{Partition: r.Partition, Seq: ev.Seq, Offset: r.Offset, Kind: KindAttestation,
				Expected: want, Found: got, Detail: "the attestation is valid but attests another decision"}
		}
		c.rep.Attestations++
	}
	if q := ev.QWEDVerified; q != nil {
		for i, tok := range q.Attestations {
			if tok == "" {
				continue
			}
			cl, err := v.keys.VerifyRecord(tok)
			if err != nil {
				return fail(fmt.Sprintf("attestation %d does not verify", i), err)
			}
			want := fmt.Sprintf("seq %d partition %d jti %s.%d kind %s iat %d", ev.Seq, ev.Partition, q.VerificationID, i, domain.CmdQWEDVerify, ev.Time.Unix())
			got := fmt.Sprintf("seq %d partition %d jti %s kind %s iat %d", cl.Seq, cl.Partition, cl.ID, cl.Kind, cl.IssuedAt)
			if want != got {
				return &Break{Partition: r.Partition, Seq: ev.Seq, Offset: r.Offset, Kind: KindAttestation,
					Expected: want, Found: got, Detail: fmt.Sprintf("attestation %d is valid but attests another verification", i)}
			}
			c.rep.Attestations++
		}
	}
	return nil
}
