package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type inner struct {
	Name  string            `json:"name"`
	Extra json.RawMessage   `json:"extra,omitempty"`
	Tags  map[string]string `json:"tags,omitempty"`
}

type embedded struct {
	AgentID string `json:"agent_id"`
}

type outer struct {
	Type   string  `json:"type"`
	Inner  inner   `json:"inner"`
	List   []inner `json:"list"`
	Ptr    *inner  `json:"ptr"`
	Plain  string
	Hidden string `json:"-"`
	embedded
}

func TestShapeOfNamesTheMembersEncodingJSONDecodes(t *testing.T) {
	s := ShapeOf(reflect.TypeFor[outer](), true)
	var got []string
	for n := range s.members {
		got = append(got, n)
	}
	slices.Sort(got)
	want := []string{"Plain", "agent_id", "inner", "list", "ptr", "type"}
	if !slices.Equal(got, want) {
		t.Fatalf("members %v, want %v", got, want)
	}
	if s.members["inner"] == nil || s.members["inner"].members["name"] != nil || !s.members["inner"].closed {
		t.Fatalf("inner shape %+v", s.members["inner"])
	}
	if s.members["list"].elem == nil || s.members["list"].elem.members == nil {
		t.Fatalf("list shape %+v", s.members["list"])
	}
}

// TestIssue11_9_ParserDifferential pins the refusals of issue 11 item 9:
// duplicates and wrong case at any depth, unknown members of closed
// shapes, and what stays accepted.
func TestIssue11_9_ParserDifferential(t *testing.T) {
	closed := ShapeOf(reflect.TypeFor[outer](), true)
	open := ShapeOf(reflect.TypeFor[outer](), false)
	for _, tc := range []struct {
		name, in string
		shape    *Shape
		kind     Kind
		path     string
	}{
		{"plain", `{"type":"a","inner":{"name":"x"}}`, closed, 0, ""},
		{"issue example", `{"type":"execute_sql","query":"DROP TABLE users","TYPE":"calculate"}`, nil, KindDuplicate, "TYPE"},
		{"issue example in a struct", `{"type":"execute_sql","TYPE":"calculate"}`, closed, KindDuplicate, "TYPE"},
		{"exact duplicate", `{"type":"a","type":"b"}`, nil, KindDuplicate, "type"},
		{"escaped duplicate", `{"type":"a","typ\u0065":"b"}`, nil, KindDuplicate, "type"},
		{"kelvin sign folds to k", "{\"k\":1,\"\u212a\":2}", nil, KindDuplicate, "\u212a"},
		{"long s folds to s", "{\"s\":1,\"\u017f\":2}", nil, KindDuplicate, "\u017f"},
		{"invalid utf8 names are one name", "{\"\xff\":1,\"\xfe\":2}", nil, KindDuplicate, "\uFFFD"},
		{"nested duplicate", `{"inner":{"extra":{"a":[{"b":1,"c":{"d":1,"d":2}}]}}}`, closed, KindDuplicate, "inner.extra.a[0].c.d"},
		{"nested wrong-case duplicate in a map", `{"inner":{"tags":{"x":"1","X":"2"}}}`, closed, KindDuplicate, "inner.tags.X"},
		{"wrong case alone", `{"TYPE":"calculate"}`, closed, KindWrongCase, "TYPE"},
		{"wrong case in an open shape", `{"Type":"calculate","other":1}`, open, KindWrongCase, "Type"},
		{"nested wrong case", `{"list":[{"name":"a"},{"NAME":"b"}]}`, closed, KindWrongCase, "list[1].NAME"},
		{"wrong case behind a pointer", `{"ptr":{"Name":"b"}}`, closed, KindWrongCase, "ptr.Name"},
		{"wrong case of an embedded field", `{"Agent_ID":"a"}`, closed, KindWrongCase, "Agent_ID"},
		{"unknown in a closed shape", `{"type":"a","query":"x"}`, closed, KindUnknown, "query"},
		{"unknown nested", `{"inner":{"name":"a","nme":"b"}}`, closed, KindUnknown, "inner.nme"},
		{"unknown in an open shape is accepted", `{"type":"a","query":"x"}`, open, 0, ""},
		{"a skipped field's name is unknown", `{"Hidden":"x"}`, closed, KindUnknown, "Hidden"},
		{"free values keep their case", `{"inner":{"extra":{"Name":1,"TYPE":2}}}`, closed, 0, ""},
		{"same name in sibling objects", `{"list":[{"name":"a"},{"name":"b"}],"inner":{"name":"c"}}`, closed, 0, ""},
		{"malformed", `{"type":}`, closed, KindSyntax, ""},
		{"trailing data", `{} x`, nil, KindSyntax, ""},
		{"bad escape", `{"a\x":1}`, nil, KindSyntax, ""},
		{"raw control character", "{\"a\n\":1}", nil, KindSyntax, ""},
		{"empty", ``, nil, KindSyntax, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.in), tc.shape)
			if tc.kind == 0 {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want nil", tc.in, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Check(%s) = %v, want an *Error of kind %v", tc.in, err, tc.kind)
			}
			if e.Kind != tc.kind || e.Path != tc.path || (e.Kind != KindSyntax) != strings.HasPrefix(e.Pointer, "/") {
				t.Fatalf("Check(%s) = %v (kind %v, path %q), want kind %v, path %q", tc.in, e, e.Kind, e.Path, tc.kind, tc.path)
			}
		})
	}
}

func TestCheckSetsThePositionAndTheExpectedName(t *testing.T) {
	in := `{"inner":{"name":"a","Name":"b"}}`
	var e *Error
	if !errors.As(Check([]byte(in), nil), &e) {
		t.Fatal("no error")
	}
	if e.Offset != strings.Index(in, `"Name"`) || e.Name != "Name" || e.Expected != "name" {
		t.Fatalf("error %+v", e)
	}
	if got := e.Error(); got != `member inner.Name repeats member "name" in another case` {
		t.Fatalf("message %q", got)
	}
}

// TestCheckLargeObjectsUseASet crosses smallMembers: a duplicate found
// by the set, at either side of the switch, and no false positive.
func TestCheckLargeObjectsUseASet(t *testing.T) {
	build := func(n int, dupOf, at int) []byte {
		var b bytes.Buffer
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			name := "m" + strconv.Itoa(i)
			if i == at {
				name = "M" + strconv.Itoa(dupOf)
			}
			b.WriteString(strconv.Quote(name) + ":1")
		}
		b.WriteByte('}')
		return b.Bytes()
	}
	if err := Check(build(1000, -1, -1), nil); err != nil {
		t.Fatalf("1000 distinct members: %v", err)
	}
	for _, at := range []int{1, smallMembers - 1, smallMembers, smallMembers + 1, 999} {
		var e *Error
		if !errors.As(Check(build(1000, 0, at), nil), &e) || e.Kind != KindDuplicate || e.Expected != "m0" {
			t.Fatalf("duplicate at %d: %v", at, e)
		}
	}
}

func TestCheckDepth(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if err := Check([]byte(deep), nil); err != nil {
		t.Fatalf("depth %d: %v", MaxDepth, err)
	}
	deeper := "[" + deep + "]"
	var e *Error
	if !errors.As(Check([]byte(deeper), nil), &e) || e.Kind != KindSyntax {
		t.Fatalf("depth %d: %v", MaxDepth+1, e)
	}
}

func TestCheckAllocatesNothingOnSmallPlainObjects(t *testing.T) {
	s := ShapeOf(reflect.TypeFor[outer](), true)
	in := []byte(`{"type":"a","inner":{"name":"x","extra":{"a":[1,2.5e3,true,null,"s"]}},"list":[{"name":"y"}],"agent_id":"z"}`)
	if n := testing.AllocsPerRun(100, func() {
		if err := Check(in, s); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

func TestCheckPointer(t *testing.T) {
	var e *Error
	if !errors.As(Check([]byte(`{"a/b":[{"c~":{"x":1,"X":2}}]}`), nil), &e) || e.Pointer != "/a~1b/0/c~0/X" || e.Path != "a/b[0].c~.X" {
		t.Fatalf("error %+v", e)
	}
}
