package eventjson

// Encoding, for the gate itself (the package doc speaks of decoding). The
// log's record payload is the event as encoding/json marshals it: the
// hash chain (each event's prev is the SHA-256 of the previous payload)
// and replay --verify compare those bytes. AppendEvent writes exactly the
// same bytes, field by field in struct order, without reflection; a value
// it is not certain to write as encoding/json does (AppendEventFast lists
// them) makes it encode the whole event with json.Marshal instead, as
// domain/fastdigest.go does for digests. handlers.EncodeEvent (the worker,
// checkpoints, replay) encodes with Marshal. The per-struct functions are
// in encode_event.go, the scalar and dynamic values in encode_value.go.

import (
	"encoding/json"
	"sync"

	"github.com/agentgate/agentgate/domain"
)

// AppendEvent appends the JSON encoding of ev to dst and returns the
// extended slice: exactly the bytes json.Marshal(ev) returns, for every
// event. It fails exactly when json.Marshal fails (with its error),
// leaving dst's contents as they were. Events made of the gate's own values
// are encoded by a hand-written fast path that allocates nothing once dst
// has room; the few values the fast path leaves alone (see AppendEventFast)
// are encoded with json.Marshal.
func AppendEvent(dst []byte, ev *domain.Event) ([]byte, error) {
	if b, ok := AppendEventFast(dst, ev); ok {
		return b, nil
	}
	p, err := json.Marshal(ev)
	if err != nil {
		return dst, err
	}
	return append(dst, p...), nil
}

// AppendEventFast is AppendEvent's fast path alone: it appends ev's
// encoding to dst and reports true when it could write exactly what
// json.Marshal writes; otherwise it reports false and returns dst as it
// was (its spare capacity may have been written to). It says no to error
// details holding a type other than nil, bool, string, the Go integer
// types, finite float64, domain.USD, json.Number, json.RawMessage,
// time.Time, *time.Time, []string, []any and map[string]any (nested at
// most 32 deep); to an invalid json.Number or json.RawMessage; and
// to a time.Time that encoding/json refuses (a year outside 0-9999, an
// offset of a day or more). Tests use it to check that the fast path, not
// the fallback, encodes the events the gate writes.
func AppendEventFast(dst []byte, ev *domain.Event) ([]byte, bool) {
	e := encoder{buf: dst, ok: true}
	if ev == nil {
		e.null()
	} else {
		e.event(ev)
	}
	if !e.ok {
		return dst, false
	}
	return e.buf, true
}

// Marshal returns ev's encoding (json.Marshal's bytes, see AppendEvent) in
// a new slice of exactly its length, which the caller owns, or
// json.Marshal's error. The fast path encodes into a pooled scratch
// buffer, so an event costs one allocation; the fallback returns what
// json.Marshal returns.
func Marshal(ev *domain.Event) ([]byte, error) {
	sp := scratch.Get().(*[]byte)
	b, fast := AppendEventFast((*sp)[:0], ev)
	var out []byte
	if fast {
		out = make([]byte, len(b))
		copy(out, b)
	}
	if cap(b) <= maxScratch {
		*sp = b[:0]
		scratch.Put(sp)
	}
	if !fast {
		return json.Marshal(ev)
	}
	return out, nil
}

// scratch holds the buffers Marshal encodes into; one larger than
// maxScratch (an event with a huge string) is left to the collector.
var scratch = sync.Pool{New: func() any {
	b := make([]byte, 0, 4096)
	return &b
}}

const maxScratch = 64 << 10

// encoder appends JSON to buf. ok turns false at the first value the fast
// path cannot write exactly as encoding/json would; what follows is then
// written only to be thrown away.
type encoder struct {
	buf []byte
	ok  bool
	// evErr is the event's error and evErrJSON where its encoding lies
	// in buf: a denied decision's error is the same *domain.Error, and is
	// copied rather than encoded again.
	evErr     *domain.Error
	evErrJSON [2]int
}

// fail records that the event needs the fallback.
func (e *encoder) fail() { e.ok = false }

// open starts an object; key adds its members, close ends it.
func (e *encoder) open() { e.buf = append(e.buf, '{') }

func (e *encoder) close() { e.buf = append(e.buf, '}') }

// key starts the member name (a constant struct tag name: no character
// of it needs escaping), after a comma unless it is the object's first.
func (e *encoder) key(name string) {
	b := e.buf
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	e.buf = append(b, '"', ':')
}

func (e *encoder) null() { e.buf = append(e.buf, "null"...) }

// The members of each type: name then value. The opt forms are the
// omitempty fields: nothing is written for the zero value.

func (e *encoder) strField(name, s string) {
	e.key(name)
	e.buf = appendQuoted(e.buf, s)
}

func (e *encoder) optStr(name, s string) {
	if s != "" {
		e.strField(name, s)
	}
}

func (e *encoder) intField(name string, v int64) {
	e.key(name)
	e.buf = appendInt(e.buf, v)
}

func (e *encoder) optInt(name string, v int64) {
	if v != 0 {
		e.intField(name, v)
	}
}

func (e *encoder) uintField(name string, v uint64) {
	e.key(name)
	e.buf = appendUint(e.buf, v)
}

func (e *encoder) boolField(name string, v bool) {
	e.key(name)
	e.buf = appendBool(e.buf, v)
}

func (e *encoder) optBool(name string, v bool) {
	if v {
		e.boolField(name, v)
	}
}

func (e *encoder) usdField(name string, v domain.USD) {
	e.key(name)
	e.buf = appendUSD(e.buf, v)
}

func (e *encoder) optUSD(name string, v domain.USD) {
	if v != 0 {
		e.usdField(name, v)
	}
}

// optNumber writes a json.Number field tagged omitempty ("" is omitted).
func (e *encoder) optNumber(name string, n json.Number) {
	if n != "" {
		e.key(name)
		e.number(n)
	}
}

// strings writes a []string: null when nil (an empty slice is []).
func (e *encoder) strings(list []string) {
	if list == nil {
		e.null()
		return
	}
	e.buf = append(e.buf, '[')
	for i, s := range list {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendQuoted(e.buf, s)
	}
	e.buf = append(e.buf, ']')
}

func (e *encoder) stringsField(name string, list []string) {
	e.key(name)
	e.strings(list)
}

// optStrings writes a []string field tagged omitempty (nil and empty are
// omitted).
func (e *encoder) optStrings(name string, list []string) {
	if len(list) > 0 {
		e.stringsField(name, list)
	}
}

// AppendError appends the JSON encoding of x to dst: exactly the bytes
// json.Marshal(x) returns (the projections store a decision's error in
// that form), by the fast path when it can and by json.Marshal
// otherwise, failing exactly when json.Marshal fails with dst unchanged.
func AppendError(dst []byte, x *domain.Error) ([]byte, error) {
	e := encoder{buf: dst, ok: true}
	if x == nil {
		e.null()
	} else {
		e.error(x)
	}
	if e.ok {
		return e.buf, nil
	}
	p, err := json.Marshal(x)
	if err != nil {
		return dst, err
	}
	return append(dst, p...), nil
}
