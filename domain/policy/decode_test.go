package policy

import (
	"strings"
	"testing"
)

// TestDecode_Valid decodes one policy of each type and checks the
// normalized result.
func TestDecode_Valid(t *testing.T) {
	p, pr := Decode([]byte(`{"id":"daily","name":"Daily cap","type":"spending","scope":{"agents":["b","a"]},
		"spending":{"per_transaction_cents":500,"daily_cents":1000,"on_exceed":"confirm"}}`))
	if pr != nil {
		t.Fatal(pr)
	}
	if p.Scope.Agents[0] != "a" || p.Spending.DailyCents != 1000 || p.Spending.OnExceed != OnExceedConfirm {
		t.Fatalf("decoded %+v", p)
	}
	for _, s := range []string{
		`{"id":"c","type":"category","scope":{},"category":{"mode":"block","categories":["gambling","adult"]}}`,
		`{"id":"k","type":"confirmation","scope":{"business_id":"shop-1"},"override":true,"confirmation":{"above_cents":100}}`,
		`{"id":"w","type":"time_window","scope":{},"shadow":true,"time_window":{"time_zone":"Europe/Paris","windows":[{"days":["fri","mon"],"start":"09:00","end":"17:30"},{"days":["sat"],"start":"00:00","end":"24:00"},{"days":["mon"],"start":"17:30","end":"18:00"}],"outside":"queue"}}`,
	} {
		if _, pr := Decode([]byte(s)); pr != nil {
			t.Errorf("%s: %v", s, pr)
		}
	}
}

// TestDecode_Refusals pins the code and the member of each refusal.
func TestDecode_Refusals(t *testing.T) {
	spend := func(body string) string {
		return `{"id":"p","type":"spending","scope":{},"spending":` + body + `}`
	}
	tw := func(zone, windows string) string {
		return `{"id":"p","type":"time_window","scope":{},"time_window":{"time_zone":"` + zone + `","windows":` + windows + `}}`
	}
	cases := []struct {
		name, body, code, field string
	}{
		{"empty", ``, CodeInvalidRequest, ""},
		{"array", `[]`, CodeInvalidRequest, ""},
		{"syntax", `{"id":`, CodeInvalidRequest, ""},
		{"unknown top", `{"id":"p","type":"spending","scope":{},"spending":{"daily_cents":1},"extra":1}`, CodeInvalidRequest, "extra"},
		{"unknown deep", spend(`{"daily_cents":1,"yearly_cents":2}`), CodeInvalidRequest, "spending.yearly_cents"},
		{"unknown window member", tw("UTC", `[{"days":["mon"],"start":"09:00","end":"10:00","tz":"x"}]`), CodeInvalidRequest, "time_window.windows[0].tz"},
		{"repeated", `{"id":"p","id":"q","type":"spending","scope":{},"spending":{"daily_cents":1}}`, CodeInvalidRequest, "id"},
		{"repeated deep", spend(`{"daily_cents":1,"daily_cents":2}`), CodeInvalidRequest, "spending.daily_cents"},
		{"wrong case", `{"ID":"p","type":"spending","scope":{},"spending":{"daily_cents":1}}`, CodeInvalidRequest, "ID"},
		{"version", `{"id":"p","version":3,"type":"spending","scope":{},"spending":{"daily_cents":1}}`, CodeInvalidRequest, "version"},
		{"too big", `{"id":"p","name":"` + strings.Repeat("x", MaxPolicyBytes) + `"}`, CodeTooLong, ""},
		{"no id", `{"type":"spending","scope":{},"spending":{"daily_cents":1}}`, CodeMissingField, "id"},
		{"bad id", `{"id":"a b","type":"spending","scope":{},"spending":{"daily_cents":1}}`, CodeInvalidRequest, "id"},
		{"long id", `{"id":"` + strings.Repeat("a", MaxIDChars+1) + `","type":"spending","scope":{},"spending":{"daily_cents":1}}`, CodeTooLong, "id"},
		{"name control", `{"id":"p","name":"a\u202eb","type":"spending","scope":{},"spending":{"daily_cents":1}}`, CodeInvalidRequest, "name"},
		{"no type", `{"id":"p","scope":{},"spending":{"daily_cents":1}}`, CodeMissingField, "type"},
		{"unknown type", `{"id":"p","type":"vibes","scope":{}}`, CodeUnsupportedType, "type"},
		{"type without member", `{"id":"p","type":"spending","scope":{}}`, CodeMissingField, "spending"},
		{"two members", `{"id":"p","type":"spending","scope":{},"spending":{"daily_cents":1},"confirmation":{"always":true}}`, CodeInvalidRequest, "confirmation"},
		{"negative", spend(`{"daily_cents":-1}`), CodeInvalidRequest, "spending.daily_cents"},
		{"huge", spend(`{"daily_cents":1000000000000001}`), CodeInvalidRequest, "spending.daily_cents"},
		{"overflow", spend(`{"daily_cents":99999999999999999999}`), CodeInvalidRequest, "spending.daily_cents"},
		{"fraction", spend(`{"daily_cents":1.5}`), CodeInvalidRequest, "spending.daily_cents"},
		{"exponent", spend(`{"daily_cents":1e3}`), CodeInvalidRequest, "spending.daily_cents"},
		{"string amount", spend(`{"daily_cents":"10"}`), CodeInvalidRequest, "spending.daily_cents"},
		{"NaN", spend(`{"daily_cents":NaN}`), CodeInvalidRequest, ""},
		{"no limit", spend(`{"on_exceed":"block"}`), CodeMissingField, "spending"},
		{"on_exceed", spend(`{"daily_cents":1,"on_exceed":"shout"}`), CodeInvalidRequest, "spending.on_exceed"},
		{"agents dup", `{"id":"p","type":"spending","scope":{"agents":["a","a"]},"spending":{"daily_cents":1}}`, CodeInvalidRequest, "scope.agents"},
		{"agents many", `{"id":"p","type":"spending","scope":{"agents":[` + strings.Repeat(`"a",`, MaxScopeAgents) + `"b"]},"spending":{"daily_cents":1}}`, CodeTooLong, "scope.agents"},
		{"bad business", `{"id":"p","type":"spending","scope":{"business_id":"a/b"},"spending":{"daily_cents":1}}`, CodeInvalidRequest, "scope.business_id"},
		{"override without business", `{"id":"p","type":"spending","scope":{},"override":true,"spending":{"daily_cents":1}}`, CodeMissingField, "scope.business_id"},
		{"category mode", `{"id":"p","type":"category","scope":{},"category":{"mode":"maybe","categories":["a"]}}`, CodeInvalidRequest, "category.mode"},
		{"category none", `{"id":"p","type":"category","scope":{},"category":{"mode":"allow","categories":[]}}`, CodeMissingField, "category.categories"},
		{"category upper", `{"id":"p","type":"category","scope":{},"category":{"mode":"allow","categories":["Food"]}}`, CodeInvalidRequest, "category.categories[0]"},
		{"category dup", `{"id":"p","type":"category","scope":{},"category":{"mode":"allow","categories":["a","a"]}}`, CodeInvalidRequest, "category.categories"},
		{"confirmation empty", `{"id":"p","type":"confirmation","scope":{},"confirmation":{}}`, CodeMissingField, "confirmation"},
		{"bad zone", tw("Mars/Olympus", `[{"days":["mon"],"start":"09:00","end":"10:00"}]`), CodeInvalidRequest, "time_window.time_zone"},
		{"local zone", tw("Local", `[{"days":["mon"],"start":"09:00","end":"10:00"}]`), CodeInvalidRequest, "time_window.time_zone"},
		{"path zone", tw("../../etc/passwd", `[{"days":["mon"],"start":"09:00","end":"10:00"}]`), CodeInvalidRequest, "time_window.time_zone"},
		{"no windows", tw("UTC", `[]`), CodeMissingField, "time_window.windows"},
		{"bad start", tw("UTC", `[{"days":["mon"],"start":"9:00","end":"10:00"}]`), CodeInvalidRequest, "time_window.windows[0].start"},
		{"start 24", tw("UTC", `[{"days":["mon"],"start":"24:00","end":"24:00"}]`), CodeInvalidRequest, "time_window.windows[0].start"},
		{"end 24:01", tw("UTC", `[{"days":["mon"],"start":"09:00","end":"24:01"}]`), CodeInvalidRequest, "time_window.windows[0].end"},
		{"minute 60", tw("UTC", `[{"days":["mon"],"start":"09:60","end":"10:00"}]`), CodeInvalidRequest, "time_window.windows[0].start"},
		{"backwards", tw("UTC", `[{"days":["mon"],"start":"22:00","end":"06:00"}]`), CodeInvalidRequest, "time_window.windows[0]"},
		{"empty window", tw("UTC", `[{"days":["mon"],"start":"10:00","end":"10:00"}]`), CodeInvalidRequest, "time_window.windows[0]"},
		{"bad day", tw("UTC", `[{"days":["monday"],"start":"09:00","end":"10:00"}]`), CodeInvalidRequest, "time_window.windows[0].days[0]"},
		{"dup day", tw("UTC", `[{"days":["mon","mon"],"start":"09:00","end":"10:00"}]`), CodeInvalidRequest, "time_window.windows[0].days"},
		{"overlap", tw("UTC", `[{"days":["mon","tue"],"start":"09:00","end":"12:00"},{"days":["tue"],"start":"11:59","end":"13:00"}]`), CodeInvalidRequest, "time_window.windows[1]"},
		{"outside", `{"id":"p","type":"time_window","scope":{},"time_window":{"time_zone":"UTC","windows":[{"days":["mon"],"start":"09:00","end":"10:00"}],"outside":"later"}}`, CodeInvalidRequest, "time_window.outside"},
	}
	for _, c := range cases {
		p, pr := Decode([]byte(c.body))
		if pr == nil {
			t.Errorf("%s: accepted %+v", c.name, p)
			continue
		}
		if p != nil {
			t.Errorf("%s: a policy with a problem", c.name)
		}
		if pr.Code != c.code || pr.Field != c.field {
			t.Errorf("%s: %s %q (%s), want %s %q", c.name, pr.Code, pr.Field, pr.Message, c.code, c.field)
		}
	}
}

// TestDecode_AdjacentWindows accepts windows that touch without overlapping.
func TestDecode_AdjacentWindows(t *testing.T) {
	_, pr := Decode([]byte(`{"id":"p","type":"time_window","scope":{},"time_window":{"time_zone":"UTC","windows":[{"days":["mon"],"start":"09:00","end":"12:00"},{"days":["mon"],"start":"12:00","end":"24:00"},{"days":["tue"],"start":"00:00","end":"01:00"}]}}`))
	if pr != nil {
		t.Fatal(pr)
	}
}
