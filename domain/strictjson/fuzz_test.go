package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
)

// repeatedName is the oracle of FuzzCheck: it walks p with encoding/json's
// own tokenizer and reports whether some object has two member names that
// bytes.EqualFold (encoding/json's field matching) takes for one.
func repeatedName(t *testing.T, p []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	type frame struct {
		obj   bool
		key   bool // the next string token of an object is a key
		names []string
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			t.Fatalf("tokenizing valid JSON %q: %v", p, err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			name := tok.(string)
			for _, n := range top.names {
				if bytes.EqualFold([]byte(n), []byte(name)) {
					return true
				}
			}
			top.names = append(top.names, name)
			top.key = false
			continue
		}
		if top != nil && top.obj {
			top.key = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, key: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

// FuzzCheck pins Check with no shape against encoding/json: a syntax
// error never on text json.Valid accepts, an error always on text it
// refuses, a duplicate exactly
// when two names of one object fold to one, and, with the shape of a
// struct, no acceptance of a body that encoding/json would decode into
// that struct from a member name in another case.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"type":"execute_sql","query":"DROP TABLE users","TYPE":"calculate"}`,
		`{"a":{"b":[{"c":1,"C":2}]}}`, `{"\u0061":1,"a":2}`, "{\"k\":1,\"\u212a\":2}",
		`[1,2.5e-3,-0,true,false,null,"x\"y"]`, `{"name":"x","inner":{"NAME":"y"}}`,
		"{\"\xff\":1,\"\xfe\":2}", `{"a":"\ud800","b":"\udc00\ud800"}`, `{}`, `  `, `{"a":1}x`,
	} {
		f.Add([]byte(s))
	}
	shape := ShapeOf(reflect.TypeFor[outer](), true)
	f.Fuzz(func(t *testing.T, p []byte) {
		err := Check(p, nil)
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("error %T %v", err, err)
		}
		valid := json.Valid(p)
		if valid && e != nil && e.Kind == KindSyntax || !valid && e == nil {
			t.Fatalf("Check(%q) = %v, json.Valid = %v", p, err, valid)
		}
		if !valid {
			return
		}
		if want := repeatedName(t, p); (e != nil && e.Kind == KindDuplicate) != want {
			t.Fatalf("Check(%q) = %v, oracle finds a repeated name: %v", p, err, want)
		}
		if Check(p, shape) != nil {
			return
		}
		// Accepted with the shape: strict decoding of the same text
		// with every member name upper-cased must be refused by Check,
		// unless no name changed.
		var v outer
		dec := json.NewDecoder(bytes.NewReader(p))
		dec.DisallowUnknownFields()
		if dec.Decode(&v) != nil {
			return
		}
		up := bytes.ToUpper(p)
		if !bytes.Equal(up, p) && json.Valid(up) && Check(up, shape) == nil {
			var w outer
			if json.Unmarshal(up, &w) == nil && !reflect.DeepEqual(w, outer{}) {
				t.Fatalf("Check accepts %q, which encoding/json reads as %+v", up, w)
			}
		}
	})
}
