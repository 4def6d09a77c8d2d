package command

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/policy"
	"github.com/agentgate/agentgate/schemas"
)

// rawSchemas reads every embedded gate schema as plain JSON, by $id.
func rawSchemas(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	err := fs.WalkDir(schemas.Files(), "gate", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(schemas.Files(), p)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		out[m["$id"].(string)] = m
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// schemaWalk compares a Go type with the schema that claims to describe
// it: the same member names (encoding/json's rules, embedded structs
// promoted), closed objects, and JSON types that the Go type decodes from.
type schemaWalk struct {
	t    *testing.T
	docs map[string]map[string]any
	// extra are members a transport adds to an encoded Go value (the
	// minted secret of a reply), by schema $id.
	extra map[string][]string
	seen  map[string]bool
}

// byDef are the Go types with their own JSON encoding, each described by
// one definition of gate/defs.v1.json.
var byDef = map[reflect.Type]string{
	reflect.TypeFor[domain.USD]():        "USD",
	reflect.TypeFor[domain.TrustLevel](): "TrustLevel",
	reflect.TypeFor[domain.Risk]():       "Risk",
	reflect.TypeFor[domain.Duration]():   "Duration",
	reflect.TypeFor[domain.Limits]():     "Limits",
	reflect.TypeFor[json.Number]():       "Number",
	reflect.TypeFor[time.Time]():         "Time",
}

// resolve follows $ref (absolute, or local to base) and an anyOf whose
// other branch is null.
func (w *schemaWalk) resolve(base string, s map[string]any) (string, map[string]any) {
	for {
		if alt, ok := s["anyOf"].([]any); ok && len(alt) == 2 {
			if n, _ := alt[1].(map[string]any); n["type"] == "null" {
				s = alt[0].(map[string]any)
				continue
			}
		}
		ref, ok := s["$ref"].(string)
		if !ok {
			return base, s
		}
		doc, frag, _ := strings.Cut(ref, "#")
		if doc == "" {
			doc = base
		}
		base = doc
		s = w.docs[doc]
		if s == nil {
			w.t.Fatalf("$ref %s: no schema %s", ref, doc)
		}
		for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
			if tok != "" {
				s = s[tok].(map[string]any)
			}
		}
	}
}

// refName is the definition a schema refers to ("" for none).
func refName(s map[string]any) string {
	if alt, ok := s["anyOf"].([]any); ok && len(alt) == 2 {
		s = alt[0].(map[string]any)
	}
	ref, _ := s["$ref"].(string)
	if i := strings.LastIndex(ref, "/$defs/"); i >= 0 {
		return ref[i+len("/$defs/"):]
	}
	return ""
}

func types(s map[string]any) []string {
	switch v := s["type"].(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, x.(string))
		}
		return out
	}
	return nil
}

func (w *schemaWalk) check(at string, typ reflect.Type, base string, s map[string]any) {
	w.t.Helper()
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if def, ok := byDef[typ]; ok {
		if got := refName(s); got != def {
			w.t.Errorf("%s (%s): schema refers to %q, want the definition %q", at, typ, got, def)
		}
		return
	}
	if typ == reflect.TypeFor[json.RawMessage]() {
		if len(s) != 0 {
			w.t.Errorf("%s: a json.RawMessage takes any value, the schema says %v", at, s)
		}
		return
	}
	base, s = w.resolve(base, s)
	want := map[reflect.Kind]string{reflect.String: "string", reflect.Bool: "boolean", reflect.Int: "integer",
		reflect.Int32: "integer", reflect.Int64: "integer", reflect.Uint64: "integer", reflect.Slice: "array",
		reflect.Map: "object", reflect.Struct: "object"}[typ.Kind()]
	if typ.Kind() == reflect.String && s["enum"] != nil {
		return // an enum of the type's constants
	}
	if want == "" {
		w.t.Errorf("%s: Go type %s has no JSON schema mapping", at, typ)
		return
	}
	if !slices.Contains(types(s), want) {
		w.t.Errorf("%s (%s): schema type %v, want %s", at, typ, s["type"], want)
		return
	}
	switch typ.Kind() {
	case reflect.Slice:
		items, _ := s["items"].(map[string]any)
		w.check(at+"[]", typ.Elem(), base, items)
	case reflect.Struct:
		key := base + "|" + at
		if w.seen[key] {
			return
		}
		w.seen[key] = true
		props, _ := s["properties"].(map[string]any)
		if s["additionalProperties"] != false {
			w.t.Errorf("%s (%s): the schema does not close the object (additionalProperties false)", at, typ)
		}
		fields := jsonFields(typ)
		for name, f := range fields {
			p, ok := props[name].(map[string]any)
			if !ok {
				w.t.Errorf("%s.%s: member of %s missing from the schema", at, name, typ)
				continue
			}
			w.check(at+"."+name, f, base, p)
		}
		for name := range props {
			if _, ok := fields[name]; !ok && !(at == "" && slices.Contains(w.extra[base], name)) {
				w.t.Errorf("%s.%s: the schema has a member %s does not", at, name, typ)
			}
		}
	}
}

// jsonFields are the JSON members of a struct type by encoding/json's
// rules for the types of this API: tagged names, embedded untagged
// structs promoted (no two with one name).
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range typ.Fields() {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for n, t := range jsonFields(f.Type) {
				out[n] = t
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// TestSchemasAgreeWithGoTypes walks every command body, the event and
// every reply body against the Go type it is decoded into or encoded
// from: a member added in Go but not in the schema (or the reverse), or
// a JSON type that differs, fails.
func TestSchemasAgreeWithGoTypes(t *testing.T) {
	w := &schemaWalk{t: t, docs: rawSchemas(t), seen: map[string]bool{}, extra: map[string][]string{
		schemas.ReplyBodyID("registration"): {"agent_token"},
		schemas.ReplyBodyID("token"):        {"agent_token"},
		schemas.ReplyBodyID("prepare"):      {"confirmationToken"},
	}}
	cases := []struct {
		id  string
		typ reflect.Type
	}{
		{schemas.CommandBodyID(RegisterAgent.body), reflect.TypeFor[registerBody]()},
		{schemas.CommandBodyID(VerifyAction.body), reflect.TypeFor[verifyBody]()},
		{schemas.CommandBodyID(VerifyToolCall.body), reflect.TypeFor[toolBody]()},
		{schemas.CommandBodyID(LogExecution.body), reflect.TypeFor[executionBody]()},
		{schemas.CommandBodyID(RequestTrust.body), reflect.TypeFor[trustBody]()},
		{schemas.CommandBodyID(SetTrustLevel.body), reflect.TypeFor[setTrustBody]()},
		{schemas.CommandBodyID(SuspendAgent.body), reflect.TypeFor[suspendBody]()},
		{schemas.CommandBodyID(FileComplaint.body), reflect.TypeFor[domain.FileComplaint]()},
		{schemas.CommandBodyID(PutToolRegistry.body), reflect.TypeFor[domain.PutToolRegistry]()},
		{schemas.CommandBodyID(PutPrincipalPermissions.body), reflect.TypeFor[domain.PrincipalPermissions]()},
		{schemas.CommandBodyID(IssuePrincipalKey.body), reflect.TypeFor[struct{}]()},
		{schemas.CommandBodyID(RevokePrincipalKey.body), reflect.TypeFor[struct{}]()},
		{schemas.CommandBodyID(RevokeToken.body), reflect.TypeFor[struct{}]()},
		{schemas.CommandBodyID(RotateToken.body), reflect.TypeFor[agentFields]()},
		{schemas.CommandBodyID(Approve.body), reflect.TypeFor[resolveBody]()},
		{schemas.CommandBodyID(Deny.body), reflect.TypeFor[resolveBody]()},
		{schemas.CommandBodyID(ResolveApproval.body), reflect.TypeFor[domain.ResolveApproval]()},
		{schemas.CommandBodyID(Execute.body), reflect.TypeFor[executeBody]()},
		{schemas.CommandBodyID(PrepareExecute.body), reflect.TypeFor[executeBody]()},
		{schemas.CommandBodyID(CreateBusiness.body), reflect.TypeFor[businessBody]()},
		{schemas.CommandBodyID(DeleteBusiness.body), reflect.TypeFor[struct{}]()},
		{schemas.EventID, reflect.TypeFor[domain.Event]()},
		{schemas.ReplyBodyID("registration"), reflect.TypeFor[domain.RegistrationReply]()},
		{schemas.ReplyBodyID("decision"), reflect.TypeFor[domain.DecisionReply]()},
		{schemas.ReplyBodyID("error"), reflect.TypeFor[domain.ErrorReply]()},
		{schemas.ReplyBodyID("execution"), reflect.TypeFor[domain.ExecutionReply]()},
		{schemas.ReplyBodyID("trust-request"), reflect.TypeFor[domain.TrustRequestReply]()},
		{schemas.ReplyBodyID("approval"), reflect.TypeFor[domain.ApprovalReply]()},
		{schemas.ReplyBodyID("trust-changed"), reflect.TypeFor[domain.TrustChangedReply]()},
		{schemas.ReplyBodyID("status"), reflect.TypeFor[domain.StatusReply]()},
		{schemas.ReplyBodyID("tool-registry"), reflect.TypeFor[domain.PutToolRegistry]()},
		{schemas.ReplyBodyID("principal-permissions"), reflect.TypeFor[domain.PrincipalPermissions]()},
		{schemas.ReplyBodyID("key"), reflect.TypeFor[domain.KeyReply]()},
		{schemas.ReplyBodyID("key-issued"), reflect.TypeFor[keyIssued]()},
		{schemas.ReplyBodyID("token"), reflect.TypeFor[domain.TokenReply]()},
		{schemas.ReplyBodyID("configured"), reflect.TypeFor[domain.Config]()},
		{schemas.ReplyBodyID("prepare"), reflect.TypeFor[domain.PrepareReply]()},
		{schemas.ReplyBodyID("execute"), reflect.TypeFor[domain.ExecuteReply]()},
		{schemas.ReplyBodyID("business"), reflect.TypeFor[domain.Business]()},
		{schemas.ReplyBodyID("business-deleted"), reflect.TypeFor[domain.BusinessDeletedReply]()},
		{schemas.ReplyBodyID("expired"), reflect.TypeFor[domain.ExpiredReply]()},
		{schemas.ReplyBodyID("qwed-verified"), reflect.TypeFor[domain.QWEDVerifiedReply]()},
		{schemas.CommandBodyID(A2AMessage.body), reflect.TypeFor[a2a.Message]()},
		{schemas.CommandBodyID(A2ABoundary.body), reflect.TypeFor[a2aBoundaryBody]()},
		{schemas.CommandBodyID(A2ABlockPair.body), reflect.TypeFor[a2aPairBody]()},
		{schemas.ReplyBodyID("a2a-verdict"), reflect.TypeFor[domain.A2AReply]()},
		{schemas.ReplyBodyID("a2a-boundary"), reflect.TypeFor[domain.A2ABoundaryReply]()},
		{schemas.CommandBodyID("policy"), reflect.TypeFor[policy.Policy]()},
		{schemas.CommandBodyID("policy-change"), reflect.TypeFor[domain.PolicyChange]()},
		{schemas.ReplyBodyID("policy"), reflect.TypeFor[domain.PolicyReply]()},
		{schemas.CommandBodyID(WebhookCreate.body), reflect.TypeFor[webhookBody]()},
		{schemas.CommandBodyID(WebhookChange.body), reflect.TypeFor[webhookChangeBody]()},
		{schemas.ReplyBodyID("webhook"), reflect.TypeFor[domain.WebhookReply]()},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		doc, ok := w.docs[c.id]
		if !ok {
			t.Errorf("no schema %s", c.id)
			continue
		}
		covered[c.id] = true
		w.check("", c.typ, c.id, doc)
	}
	for id := range w.docs {
		if id != schemas.DefsID && !covered[id] {
			t.Errorf("schema %s is checked against no Go type", id)
		}
	}
}

// TestMain validates every body the package's tests send that the
// decoder accepts (validateEveryBody): each must match its schema. The
// benchmarks turn it off, to measure what the server runs.
func TestMain(m *testing.M) {
	validateEveryBody = true
	os.Exit(m.Run())
}

// serverValidation restores, for a benchmark, the validation the server
// runs (checkBody without validateEveryBody) and returns the undo.
func serverValidation() func() {
	validateEveryBody = false
	return func() { validateEveryBody = true }
}

// schemaSeeds are bodies the decoders accept in corners of JSON (null
// members and elements, strings for numbers, the nested budget form).
var schemaSeeds = []string{
	`{"action":{"type":null,"parameters":null,"estimated_cost_usd":null},"context":null,"options":null,"agent_id":null}`,
	`{"agent":null,"permissions":{"allowed_tools":["a",null]},"budget":{"cost":{"max_daily_usd":"2","current_daily_usd":[1]},"max_daily_tokens":null},"trust_level":null}`,
	`{"principal_id":null,"tools":[{"name":"t","risk_level":"HIGH"},null]}`,
	`{"request":"r","from_level":"1","to_level":2,"evidence":{"denial_rate":"0.5","days_active":null}}`,
	`{"tool_call":{"tool_name":"t","estimated_cost_usd":"1.25"},"context":{"conversation_id":"c","step_number":"3"}}`,
	`{"action_id":"a","success":null,"cost_usd":0.5,"tokens":3}`,
	`{"trust_level":" Trusted "}`, `{"suspended":false,"reason":null}`, ` null `, `{"approval_id":"x","approve":null}`,
}

// FuzzCommandSchemas holds the claim that lets checkBody skip most
// validations: a body an endpoint's decoder and the field limits accept
// matches the endpoint's schema (a schema that refused it would change
// what the gate accepts). Seeded with every endpoint body of the tests.
func FuzzCommandSchemas(f *testing.F) {
	for i, s := range append(slices.Clone(fuzzBodySeeds), schemaSeeds...) {
		for j := range fuzzEndpoints {
			f.Add(uint8(i*len(fuzzEndpoints)+j), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		e := fuzzEndpoints[int(which)%len(fuzzEndpoints)]
		in := Input{Body: body, AgentID: "agent_x", Tool: "send_email", ApprovalID: "act_1", PrincipalID: "org_1"}
		cmd, _, rej := e.ep.build(&in, &Credentials{})
		if rej != nil || domain.CheckBounds(cmd) != nil {
			return
		}
		if v := validateBody(bodySchemas()[e.ep.body].schema, body); v != nil {
			t.Fatalf("%s accepts %q, its schema %s refuses it: %s", e.name, body, e.ep.body, v.Err.Message)
		}
	})
}

// TestCheckBody pins where a command body meets its schema: after the
// decoder and the limits (Transport.Build), refused with QWED-REQ-001 naming
// the first violation; and, in the server, only for a schema that asserts
// what the decoder does not check.
func TestCheckBody(t *testing.T) {
	// A decoder that accepts anything, on the body of /suspend: the
	// schema alone refuses a string for "suspended".
	lax := &Endpoint{auth: AuthPrincipal, body: SuspendAgent.body, build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
		return &domain.Command{Type: domain.CmdSuspendAgent, AgentID: in.AgentID, Suspend: &domain.SuspendAgent{}}, nil, nil
	}}
	in := Input{Body: []byte(`{"reason":"r","suspended":"yes"}`), AgentID: "agent_1"}
	cr := Credentials{Principal: "org_1"}
	_, e := HTTP.Build(lax, &in, &cr, domain.RequestID{Source: "test", ID: "1"})
	if e == nil {
		t.Fatal("a body its schema refuses was accepted")
	}
	want := domain.Details{"field": "suspended", "reason": "schema", "keyword": "type"}
	if e.Err.Code != domain.CodeInvalidRequest || e.Status != http.StatusBadRequest || !reflect.DeepEqual(e.Err.Details, want) {
		t.Fatalf("got %d %s %v (%s), want 400 %s %v", e.Status, e.Err.Code, e.Err.Details, e.Err.Message, domain.CodeInvalidRequest, want)
	}
	// Every command body schema today asserts only what the strict check
	// and the decoder enforce: the server skips the second parse.
	for name, b := range bodySchemas() {
		if b.full {
			t.Errorf("the schema of %s asserts %v: beyond the decoder's %v", name, b.schema.Keywords(decodedDefs...), decoderKeywords)
		}
	}
	defer serverValidation()()
	if _, e := HTTP.Build(lax, &in, &cr, domain.RequestID{Source: "test", ID: "1"}); e != nil {
		t.Fatalf("the server validated a body the decoder checks: %s", e.Err.Message)
	}
	// A schema that asserts more (the QWED request: required, maxLength,
	// enum…) is validated on every body.
	if ks := schemas.Request().Keywords(); !slices.Contains(ks, "required") {
		t.Fatalf("Keywords of the QWED request = %v, want required among them", ks)
	}
}

// TestEventTypesHaveSchemas pins that the schema schemas.Command gives a
// CloudEvent command type is the body its endpoint is held to.
func TestEventTypesHaveSchemas(t *testing.T) {
	for _, typ := range EventTypes() {
		s, ok := schemas.Command(typ)
		if !ok {
			t.Errorf("%s: no schema", typ)
			continue
		}
		if want := schemas.CommandBodyID(eventEndpoints[typ].body); s.ID() != want {
			t.Errorf("%s: schema %s, its endpoint's body is %s", typ, s.ID(), want)
		}
	}
}
