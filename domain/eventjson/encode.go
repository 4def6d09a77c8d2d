package eventjson

// Encoding, for the gate itself (the package doc speaks of decoding). The
// log's record payload is the event in the v1 format (the frozen fixtures
// of schemas/testdata/events/v1 and their README): the hash chain (each
// event's prev is the SHA-256 of the previous payload) and replay --verify
// compare those bytes. AppendEvent writes them field by field in struct
// order, without reflection. The per-struct functions are in
// encode_event.go, the scalar and dynamic values in encode_value.go.

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentgate/agentgate/domain"
)

// EncodeError reports an event the codec cannot encode: error details
// holding a value that is not a detail value (domain.Details), an invalid
// json.Number or json.RawMessage, a time outside years 0-9999 or with an
// offset of a day or more, a float that is not finite, details nested
// deeper than 32 levels. The rules and engines never make such an event:
// it is a programming error, which the tests that encode every event they
// make catch.
type EncodeError struct {
	// Reason names the value.
	Reason string
}

// Error implements the error interface.
func (e *EncodeError) Error() string {
	return "eventjson: cannot encode the event: " + e.Reason
}

// AppendEvent appends the encoding of ev to dst and returns the extended
// slice, or an *EncodeError with dst's contents as they were (its spare
// capacity may have been written to). It allocates nothing once dst has
// room.
func AppendEvent(dst []byte, ev *domain.Event) ([]byte, error) {
	e := encoder{buf: dst}
	if ev == nil {
		e.null()
	} else {
		e.event(ev)
	}
	if e.err != nil {
		return dst, e.err
	}
	return e.buf, nil
}

// Marshal returns ev's encoding (see AppendEvent) in a new slice of
// exactly its length, which the caller owns, or an *EncodeError. It
// encodes into a pooled scratch buffer, so an event costs one allocation.
func Marshal(ev *domain.Event) ([]byte, error) {
	sp := scratch.Get().(*[]byte)
	b, err := AppendEvent((*sp)[:0], ev)
	var out []byte
	if err == nil {
		out = make([]byte, len(b))
		copy(out, b)
	}
	if cap(b) <= maxScratch {
		*sp = b[:0]
		scratch.Put(sp)
	}
	return out, err
}

// scratch holds the buffers Marshal encodes into; one larger than
// maxScratch (an event with a huge string) is left to the collector.
var scratch = sync.Pool{New: func() any {
	b := make([]byte, 0, 4096)
	return &b
}}

const maxScratch = 64 << 10

// encoder appends JSON to buf. err is set at the first value it cannot
// encode; what follows is then written only to be thrown away.
type encoder struct {
	buf []byte
	err *EncodeError
	// evErr is the event's error and evErrJSON where its encoding lies
	// in buf: a denied decision's error is the same *domain.Error, and is
	// copied rather than encoded again.
	evErr     *domain.Error
	evErrJSON [2]int
}

// fail records the first value the encoder cannot encode.
func (e *encoder) fail(format string, args ...any) {
	if e.err == nil {
		e.err = &EncodeError{Reason: fmt.Sprintf(format, args...)}
	}
}

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

// AppendError appends the encoding of x to dst (as an event holds it; the
// projections store a decision's error in that form), or returns an
// *EncodeError with dst's contents as they were.
func AppendError(dst []byte, x *domain.Error) ([]byte, error) {
	e := encoder{buf: dst}
	if x == nil {
		e.null()
	} else {
		e.error(x)
	}
	if e.err != nil {
		return dst, e.err
	}
	return e.buf, nil
}
