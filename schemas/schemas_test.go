package schemas

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestSchemasCompile pins that every embedded schema compiles (the
// accessors panic otherwise).
func TestSchemasCompile(t *testing.T) {
	for _, id := range []string{RequestID, BatchRequestID, ResponseID, BatchResponseID} {
		if _, err := Get(id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	for _, e := range Engines {
		if _, ok := Params(e); !ok {
			t.Fatalf("no params schema for engine %s", e)
		}
	}
	if _, ok := Params("natural_language"); ok {
		t.Fatal("natural_language has no engine and no params schema")
	}
}

func validate(t *testing.T, s *Schema, doc string) []Violation {
	t.Helper()
	v, err := s.ValidateJSON([]byte(doc))
	if err != nil {
		t.Fatalf("decoding %s: %v", doc, err)
	}
	return v
}

// TestSeed002_5_1_RequestSchema walks the constraints of §5.1 on both
// sides.
func TestSeed002_5_1_RequestSchema(t *testing.T) {
	long := strings.Repeat("x", 100000)
	tests := []struct {
		name    string
		doc     string
		keyword string // "" means valid
		at      string
	}{
		{"minimal", `{"query":"2+2=4"}`, "", ""},
		{"seed 5.2.1 math", `{"query":"x**2 + 2*x + 1 = (x+1)**2","type":"math","params":{"domain":"real","precision":10}}`, "", ""},
		{"all options", `{"query":"q","type":"logic","options":{"timeout_ms":1000,"include_proof":true,"include_attestation":false},"metadata":{"request_id":"r","correlation_id":"c","trace_id":"t"}}`, "", ""},
		{"query at the length limit", `{"query":"` + long + `"}`, "", ""},
		{"query over the length limit", `{"query":"` + long + `x"}`, "maxLength", "/query"},
		{"empty query", `{"query":""}`, "minLength", "/query"},
		{"missing query", `{"type":"math"}`, "required", ""},
		{"query not a string", `{"query":4}`, "type", "/query"},
		{"unknown type", `{"query":"q","type":"chemistry"}`, "enum", "/type"},
		{"params not an object", `{"query":"q","params":[]}`, "type", "/params"},
		{"timeout below the minimum", `{"query":"q","options":{"timeout_ms":999}}`, "minimum", "/options/timeout_ms"},
		{"timeout at the maximum", `{"query":"q","options":{"timeout_ms":300000}}`, "", ""},
		{"timeout above the maximum", `{"query":"q","options":{"timeout_ms":300001}}`, "maximum", "/options/timeout_ms"},
		{"timeout not an integer", `{"query":"q","options":{"timeout_ms":1000.5}}`, "type", "/options/timeout_ms"},
		{"include_proof not a boolean", `{"query":"q","options":{"include_proof":"yes"}}`, "type", "/options/include_proof"},
		{"request_id not a string", `{"query":"q","metadata":{"request_id":7}}`, "type", "/metadata/request_id"},
		{"not an object", `[]`, "type", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := validate(t, Request(), tc.doc)
			if tc.keyword == "" {
				if v != nil {
					t.Fatalf("want valid, got %+v", v)
				}
				return
			}
			if len(v) == 0 || v[0].Keyword != tc.keyword || v[0].InstanceLocation != tc.at {
				t.Fatalf("want %s at %q, got %+v", tc.keyword, tc.at, v)
			}
		})
	}
}

// TestSeed002_5_1_RequiredNamesTheMember pins the details a REQ-002 needs.
func TestSeed002_5_1_RequiredNamesTheMember(t *testing.T) {
	v := validate(t, Request(), `{}`)
	if len(v) != 1 || !reflect.DeepEqual(v[0].Missing, []string{"query"}) || v[0].KeywordLocation != "/required" {
		t.Fatalf("got %+v", v)
	}
}

// TestSeed002_5_3_BatchSchema pins the batch envelope and that each item
// is a §5.1 request.
func TestSeed002_5_3_BatchSchema(t *testing.T) {
	seed := `{"batch":true,"items":[{"query":"2+2=4","type":"math"},{"query":"3*3=9","type":"math"},{"query":"(AND (GT x 5))","type":"logic"}],"options":{"max_parallel":10,"fail_fast":false}}`
	if v := validate(t, BatchRequest(), seed); v != nil {
		t.Fatalf("seed example: %+v", v)
	}
	items := make([]string, 101)
	for i := range items {
		items[i] = `{"query":"1=1"}`
	}
	tests := []struct {
		name, doc, keyword, at string
	}{
		{"100 items", `{"batch":true,"items":[` + strings.Join(items[:100], ",") + `]}`, "", ""},
		{"101 items", `{"batch":true,"items":[` + strings.Join(items, ",") + `]}`, "maxItems", "/items"},
		{"no items", `{"batch":true,"items":[]}`, "minItems", "/items"},
		{"batch false", `{"batch":false,"items":[{"query":"q"}]}`, "const", "/batch"},
		{"item without query", `{"batch":true,"items":[{"query":"q"},{"type":"math"}]}`, "required", "/items/1"},
		{"item of unknown type", `{"batch":true,"items":[{"query":"q","type":"x"}]}`, "enum", "/items/0/type"},
		{"max_parallel 0", `{"batch":true,"items":[{"query":"q"}],"options":{"max_parallel":0}}`, "minimum", "/options/max_parallel"},
		{"max_parallel 101", `{"batch":true,"items":[{"query":"q"}],"options":{"max_parallel":101}}`, "maximum", "/options/max_parallel"},
		{"fail_fast not a boolean", `{"batch":true,"items":[{"query":"q"}],"options":{"fail_fast":1}}`, "type", "/options/fail_fast"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := validate(t, BatchRequest(), tc.doc)
			if tc.keyword == "" {
				if v != nil {
					t.Fatalf("want valid, got %+v", v)
				}
				return
			}
			if len(v) == 0 || v[0].Keyword != tc.keyword || v[0].InstanceLocation != tc.at {
				t.Fatalf("want %s at %q, got %+v", tc.keyword, tc.at, v)
			}
		})
	}
}

// TestSeed002_6_ResponseSchemas accepts the seed's example responses
// (§6.3, §6.4, §8.4) and refuses a status outside §6.2.
func TestSeed002_6_ResponseSchemas(t *testing.T) {
	valid := []string{
		`{"status":"VERIFIED","verified":true,"engine":"math","result":{"is_valid":true,"left_side":"x**2 + 2*x + 1","right_side":"(x + 1)**2","simplified_difference":"0","message":"Algebraic identity confirmed"},"metadata":{"request_id":"req_abc123","latency_ms":45.2,"engine_version":"1.0.0","protocol_version":"1.0.0"}}`,
		`{"status":"FAILED","verified":false,"engine":"math","result":{"is_valid":false,"expected":4,"actual":5,"message":"2 + 2 = 4, not 5"},"metadata":{"latency_ms":12.1}}`,
		`{"status":"VERIFIED","verified":true,"engine":"logic","result":{"satisfiability":"SAT","model":{"x":6,"y":9},"constraints_evaluated":2}}`,
		`{"status":"ERROR","verified":false,"error":{"code":"QWED-REQ-003","message":"Invalid query syntax","details":{"position":15,"expected":"closing parenthesis","found":"end of input"},"documentation_url":"https://qwed.ai/docs/errors/QWED-REQ-003"}}`,
	}
	for _, doc := range valid {
		if v := validate(t, Response(), doc); v != nil {
			t.Errorf("%s: %+v", doc, v)
		}
	}
	if v := validate(t, Response(), `{"status":"MAYBE","verified":false}`); len(v) != 1 || v[0].Keyword != "enum" {
		t.Errorf("unknown status: %+v", v)
	}
	if v := validate(t, Response(), `{"status":"ERROR","verified":false,"error":{"code":"oops","message":"m"}}`); len(v) != 1 || v[0].Keyword != "pattern" {
		t.Errorf("malformed code: %+v", v)
	}
	batch := `{"batch":true,"job_id":"batch_xyz789","status":"completed","summary":{"total":3,"verified":2,"failed":1,"success_rate":66.7},"items":[{"id":"0","status":"VERIFIED","verified":true},{"id":"1","status":"VERIFIED","verified":true},{"id":"2","status":"FAILED","verified":false}],"metadata":{"total_latency_ms":234.5}}`
	if v := validate(t, BatchResponse(), batch); v != nil {
		t.Errorf("seed 6.4 example: %+v", v)
	}
	if v := validate(t, BatchResponse(), strings.Replace(batch, `"success_rate":66.7`, `"success_rate":101`, 1)); len(v) != 1 || v[0].Keyword != "maximum" {
		t.Errorf("success_rate above 100: %+v", v)
	}
}

// TestSeed002_5_2_ParamsSchemas checks the documented params of §5.2.
func TestSeed002_5_2_ParamsSchemas(t *testing.T) {
	tests := []struct {
		engine, doc string
		valid       bool
	}{
		{"math", `{"domain":"real","precision":10}`, true},
		{"math", `{"precision":"ten"}`, false},
		{"logic", `{"format":"dsl"}`, true},
		{"logic", `{"format":"smtlib"}`, false},
		{"code", `{"language":"python","check_types":["security","quality"]}`, true},
		{"code", `{"check_types":["style"]}`, false},
		{"fact", `{"context":"France is a country in Europe."}`, true},
		{"fact", `{"context":5}`, false},
		{"sql", `{"schema_ddl":"CREATE TABLE users (id INT PRIMARY KEY, name TEXT, email TEXT)","dialect":"postgresql"}`, true},
		{"sql", `{"schema_ddl":["CREATE TABLE t (a INT)"]}`, false},
		{"stats", `{"data":"a,b\n1,2"}`, true},
		{"image", `[]`, false},
	}
	for _, tc := range tests {
		s, _ := Params(tc.engine)
		v := validate(t, s, tc.doc)
		if (v == nil) != tc.valid {
			t.Errorf("%s %s: valid=%v, violations %+v", tc.engine, tc.doc, tc.valid, v)
		}
	}
}

// TestDesign6_ViolationsAreSorted pins that the violations of one document
// come in one order however often it is validated (sort
// jsonschema errors before returning or hashing them, so that a digest of
// them is a function of the document).
func TestDesign6_ViolationsAreSorted(t *testing.T) {
	doc := `{"type":"x","params":1,"options":{"timeout_ms":1,"include_proof":1,"include_attestation":"n"},"metadata":{"request_id":1,"trace_id":2,"correlation_id":3}}`
	first, _ := json.Marshal(validate(t, Request(), doc))
	if n := len(validate(t, Request(), doc)); n < 8 {
		t.Fatalf("want at least 8 violations, got %d", n)
	}
	for range 50 {
		again, _ := json.Marshal(validate(t, Request(), doc))
		if string(again) != string(first) {
			t.Fatalf("order changed:\n%s\n%s", first, again)
		}
	}
	v := validate(t, Request(), doc)
	for i := 1; i < len(v); i++ {
		if v[i-1].InstanceLocation > v[i].InstanceLocation {
			t.Fatalf("not sorted by instance location: %+v", v)
		}
	}
}

// TestDecodeRefusesTrailingData pins that a document followed by another
// is not silently truncated.
func TestDecodeRefusesTrailingData(t *testing.T) {
	if _, err := Decode([]byte(`{"query":"q"} {}`)); err == nil {
		t.Fatal("trailing document accepted")
	}
	if _, err := Decode([]byte("{\"query\":\"q\"}\n ")); err != nil {
		t.Fatalf("trailing space refused: %v", err)
	}
	if _, err := Decode([]byte(`{"query":`)); err == nil {
		t.Fatal("truncated document accepted")
	}
}

// FuzzValidateRequest never panics and is deterministic on any input.
func FuzzValidateRequest(f *testing.F) {
	f.Add([]byte(`{"query":"2+2=4","type":"math"}`))
	f.Add([]byte(`{"batch":true,"items":[{"query":"q"}]}`))
	f.Add([]byte(`{"query":1,"options":{"timeout_ms":"x"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		doc, err := Decode(b)
		if err != nil {
			return
		}
		a, _ := json.Marshal(Request().Validate(doc))
		c, _ := json.Marshal(Request().Validate(doc))
		if string(a) != string(c) {
			t.Fatalf("nondeterministic: %s vs %s", a, c)
		}
		BatchRequest().Validate(doc)
	})
}
