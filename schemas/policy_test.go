package schemas

import "testing"

// TestPolicySchemas: the body of POST /policies (and the data of a
// qwed.policy.change CloudEvent) is checked as the gate's decoder checks
// it, member by member.
func TestPolicySchemas(t *testing.T) {
	policy, ok := CommandBody("policy")
	if !ok {
		t.Fatal("no policy body schema")
	}
	for _, c := range []struct {
		body, keyword, at string
	}{
		{`{"id":"daily","type":"spending","scope":{},"spending":{"daily_cents":1000,"on_exceed":"notify"}}`, "", ""},
		{`{"id":"w","type":"time_window","scope":{"agents":["a"]},"time_window":{"time_zone":"Europe/Paris","windows":[{"days":["mon"],"start":"09:00","end":"24:00"}],"outside":"queue"}}`, "", ""},
		{`{"id":"o","type":"category","scope":{"business_id":"shop"},"override":true,"category":{"mode":"allow","categories":["food"]}}`, "", ""},
		{`{"id":"daily","type":"spending","scope":{},"spending":{"daily_cents":1000},"extra":1}`, "additionalProperties", ""},
		{`{"id":"daily","type":"spending","scope":{},"spending":{"daily_cents":-1}}`, "minimum", "/spending/daily_cents"},
		{`{"id":"daily","type":"spending","scope":{}}`, "required", ""},
		{`{"id":"a b","type":"spending","scope":{},"spending":{"daily_cents":1}}`, "pattern", "/id"},
		{`{"id":"o","type":"confirmation","scope":{},"override":true,"confirmation":{"always":true}}`, "required", "/scope"},
		{`{"id":"w","type":"time_window","scope":{},"time_window":{"time_zone":"UTC","windows":[{"days":["mon"],"start":"9:00","end":"10:00"}]}}`, "pattern", "/time_window/windows/0/start"},
		{`{"id":"w","type":"time_window","scope":{},"time_window":{"time_zone":"UTC","windows":[{"days":["monday"],"start":"09:00","end":"10:00"}]}}`, "enum", "/time_window/windows/0/days/0"},
	} {
		vs, err := policy.ValidateJSON([]byte(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		if c.keyword == "" {
			if vs != nil {
				t.Errorf("%s: want valid, got %+v", c.body, vs)
			}
			continue
		}
		found := false
		for _, v := range vs {
			found = found || v.Keyword == c.keyword && v.InstanceLocation == c.at
		}
		if !found {
			t.Errorf("%s: want %s at %q, got %+v", c.body, c.keyword, c.at, vs)
		}
	}
	for _, c := range []struct {
		body  string
		valid bool
	}{
		{`{"op":"create","policy":{"id":"p","type":"confirmation","scope":{},"confirmation":{"always":true}}}`, true},
		{`{"op":"delete","consumer":"org_1","policy":{"id":"p"}}`, true},
		{`{"op":"delete","policy":{"id":"p","type":"spending"}}`, false},
		{`{"op":"update","policy":{"id":"p"}}`, false},
		{`{"op":"upsert","policy":{"id":"p"}}`, false},
	} {
		vs, err := ValidateCommand("qwed.policy.change", []byte(c.body))
		if err != nil || (vs == nil) != c.valid {
			t.Errorf("%s: %v %+v, want valid %v", c.body, err, vs, c.valid)
		}
	}
	reply := `{"consumer":"org_1","op":"create","policy":{"id":"p","type":"confirmation","scope":{},"version":1,"confirmation":{"always":true}},"seq":12}`
	if vs, err := ValidateReply("qwed.policy.change", []byte(reply)); err != nil || vs != nil {
		t.Fatalf("reply: %v %+v", err, vs)
	}
}
