package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentgate/agentgate/schemas"
)

// docURL is the base URL the document is compiled under.
const docURL = "https://agentgate.dev/openapi.v1.json"

// FixHint is appended to every violation: where the contract is kept.
const FixHint = "if the handler is right, document it in handlers/httpapi/openapi_test.go " +
	"(the operations table; read views are reflected from their Go types) and regenerate " +
	"schemas/openapi.v1.json with `go test ./handlers/httpapi -run TestOpenAPIDocument -update` " +
	"(then the SDKs' types with `make sdk-types`); else fix the handler"

// Exchange is one HTTP request and its answer.
type Exchange struct {
	Method   string
	URL      *url.URL
	Header   http.Header
	Body     []byte
	Status   int
	RespHead http.Header
	RespBody []byte
}

// Validator checks exchanges against one OpenAPI 3.1 document. It is safe
// for concurrent use.
type Validator struct {
	doc     map[string]any
	ops     []*operation
	schemes map[string]map[string]any
	comp    *jsonschema.Compiler
	mu      sync.Mutex
	cache   map[string]*jsonschema.Schema
}

// operation is one documented method of one path template.
type operation struct {
	ID       string // "METHOD /path/{template}"
	method   string
	segments []string // the template's segments; "{x}" is a parameter
	literals int
	pointer  string // the JSON pointer of the operation object
	node     map[string]any
	params   []map[string]any // path item's and operation's, resolved
}

// New compiles the OpenAPI document b.
func New(b []byte) (*Validator, error) {
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("decoding the OpenAPI document: %w", err)
	}
	doc, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("decoding the OpenAPI document: not an object")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, raw); err != nil {
		return nil, fmt.Errorf("adding the OpenAPI document: %w", err)
	}
	v := &Validator{doc: doc, comp: c, cache: map[string]*jsonschema.Schema{}, schemes: map[string]map[string]any{}}
	comps, _ := doc["components"].(map[string]any)
	ss, _ := comps["securitySchemes"].(map[string]any)
	for n, s := range ss {
		m, _ := s.(map[string]any)
		v.schemes[n] = m
	}
	paths, _ := doc["paths"].(map[string]any)
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item, _ := paths[p].(map[string]any)
		common := v.params(item["parameters"])
		for _, m := range []string{"get", "put", "post", "delete", "patch", "head", "options"} {
			node, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			op := &operation{ID: strings.ToUpper(m) + " " + p, method: strings.ToUpper(m), node: node,
				pointer: "/paths/" + escape(p) + "/" + m, segments: strings.Split(strings.TrimPrefix(p, "/"), "/")}
			for _, s := range op.segments {
				if !strings.HasPrefix(s, "{") {
					op.literals++
				}
			}
			op.params = append(slices.Clone(common), v.params(node["parameters"])...)
			v.ops = append(v.ops, op)
		}
	}
	return v, nil
}

// Default is the Validator of the committed document
// (schemas.OpenAPI()), compiled once.
var Default = sync.OnceValues(func() (*Validator, error) { return New(schemas.OpenAPI()) })

// Operations returns the documented operations ("METHOD /path"), sorted.
func (v *Validator) Operations() []string {
	out := make([]string, 0, len(v.ops))
	for _, op := range v.ops {
		out = append(out, op.ID)
	}
	slices.Sort(out)
	return out
}

// params resolves a parameters list.
func (v *Validator) params(x any) []map[string]any {
	l, _ := x.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, p := range l {
		if m, ok := v.resolve(p).(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// resolve follows a local $ref ("#/...") of a non-schema object.
func (v *Validator) resolve(x any) any {
	for range 8 {
		m, ok := x.(map[string]any)
		if !ok {
			return x
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return x
		}
		x = v.at(ref[1:])
	}
	return x
}

// at returns the value at a JSON pointer of the document.
func (v *Validator) at(ptr string) any {
	var cur any = v.doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	return cur
}

// refPointer returns the pointer an object stands at: its $ref's, or
// where it is.
func refPointer(x any, where string) string {
	if m, ok := x.(map[string]any); ok {
		if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
			return ref[1:]
		}
	}
	return where
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// schemaAt compiles (once) the schema at a JSON pointer of the document.
func (v *Validator) schemaAt(ptr string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.cache[ptr]; ok {
		return s, nil
	}
	s, err := v.comp.Compile(docURL + "#" + ptr)
	if err != nil {
		return nil, fmt.Errorf("compiling the schema at %s: %w", ptr, err)
	}
	v.cache[ptr] = s
	return s, nil
}

// Match returns the operation a request names: the documented path
// template that matches its path with the most literal segments, and
// whether some template matches the path with another method.
func (v *Validator) match(method, p string) (op *operation, pathKnown bool, values map[string]string) {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if method == http.MethodHead {
		method = http.MethodGet
	}
	for _, o := range v.ops {
		vals, ok := o.matches(segs)
		if !ok {
			continue
		}
		pathKnown = true
		if o.method == method && (op == nil || o.literals > op.literals) {
			op, values = o, vals
		}
	}
	return op, pathKnown, values
}

func (o *operation) matches(segs []string) (map[string]string, bool) {
	if len(segs) != len(o.segments) {
		return nil, false
	}
	vals := map[string]string{}
	for i, s := range o.segments {
		if name, ok := strings.CutPrefix(s, "{"); ok {
			if segs[i] == "" {
				return nil, false
			}
			u, err := url.PathUnescape(segs[i])
			if err != nil {
				return nil, false
			}
			vals[strings.TrimSuffix(name, "}")] = u
			continue
		}
		if s != segs[i] {
			return nil, false
		}
	}
	return vals, true
}

// Check returns what the document does not describe of x (nil when it
// describes all of it) and the operation x exercised ("" for none).
//
// The answer is always checked: its status must be documented for the
// operation, its media type too, and a JSON body must match the schema;
// headers the response marks required must be there. The request is
// checked when it was accepted (a 2xx answer that is not a JSON-RPC error
// of an operation marked x-jsonrpc): its security requirement,
// its parameters (required ones present, every value matching its
// schema, no undocumented query parameter) and its body. A refused
// request (4xx, 5xx) may be anything: tests send malformed requests on
// purpose; the refusal itself must be documented.
//
// A path no template matches is described when answered 404 (or the
// edge's 429) with the error body (or a redirect to the canonical path, 301/307/308, as
// net/http's mux answers "//x" or "/x/"); a documented path with a method
// it has not, when answered 405 with the error body and an Allow header.
func (v *Validator) Check(x *Exchange) (violations []string, opID string) {
	method := strings.ToUpper(x.Method)
	op, pathKnown, values := v.match(method, x.URL.EscapedPath())
	if op == nil {
		return v.checkUnrouted(x, pathKnown), ""
	}
	var out []string
	add := func(format string, args ...any) {
		out = append(out, op.ID+": "+fmt.Sprintf(format, args...))
	}
	v.checkResponse(op, x, add)
	rpcError := false
	if rpc, _ := op.node["x-jsonrpc"].(bool); rpc {
		rpcError = hasMember(x.RespBody, "error")
	}
	if x.Status >= 200 && x.Status < 300 && !rpcError {
		v.checkRequest(op, x, values, add)
	}
	return out, op.ID
}

// errorBody is the pointer of the error body's schema.
const errorBody = "/components/schemas/ErrorReply"

func (v *Validator) checkUnrouted(x *Exchange, pathKnown bool) []string {
	where := strings.ToUpper(x.Method) + " " + x.URL.Path
	switch {
	case x.Status == http.StatusMethodNotAllowed && pathKnown:
		if x.RespHead.Get("Allow") == "" {
			return []string{where + ": 405 without an Allow header"}
		}
		return v.checkErrorBody(where, x)
	case x.Status == http.StatusNotFound && !pathKnown, x.Status == http.StatusTooManyRequests:
		// 429: the edge's refusal limit answers before routing.
		return v.checkErrorBody(where, x)
	case (x.Status == http.StatusMovedPermanently || x.Status == http.StatusTemporaryRedirect ||
		x.Status == http.StatusPermanentRedirect) && x.RespHead.Get("Location") != "":
		return nil
	case pathKnown:
		return []string{fmt.Sprintf("%s: the method is not documented for this path, yet the answer is %d (not 405)", where, x.Status)}
	}
	return []string{fmt.Sprintf("%s: no documented path matches, yet the answer is %d (not 404)", where, x.Status)}
}

func (v *Validator) checkErrorBody(where string, x *Exchange) []string {
	var out []string
	for _, m := range v.validate(errorBody, x.RespBody) {
		out = append(out, fmt.Sprintf("%s: %d body: %s", where, x.Status, m))
	}
	return out
}

// checkResponse checks the answer against the operation's responses.
func (v *Validator) checkResponse(op *operation, x *Exchange, add func(string, ...any)) {
	resps, _ := op.node["responses"].(map[string]any)
	code := strconv.Itoa(x.Status)
	ptr := op.pointer + "/responses/"
	r, ok := resps[code]
	switch {
	case ok:
		ptr += code
	default:
		rng := code[:1] + "XX"
		if r, ok = resps[rng]; ok {
			ptr += rng
		} else if r, ok = resps["default"]; ok {
			ptr += "default"
		}
	}
	if !ok {
		add("status %d is not documented (documented: %s); body %s", x.Status,
			strings.Join(slices.Sorted(maps.Keys(resps)), ", "), clip(x.RespBody))
		return
	}
	ptr = refPointer(r, ptr)
	resp, _ := v.resolve(r).(map[string]any)
	hdrs, _ := resp["headers"].(map[string]any)
	for _, n := range slices.Sorted(maps.Keys(hdrs)) {
		h, _ := v.resolve(hdrs[n]).(map[string]any)
		if req, _ := h["required"].(bool); req && x.RespHead.Get(n) == "" {
			add("%d: the required response header %s is missing", x.Status, n)
		}
	}
	content, _ := resp["content"].(map[string]any)
	if len(x.RespBody) == 0 && x.Method != http.MethodHead {
		if len(content) > 0 && x.Status != http.StatusNoContent {
			if _, ok := content["*/*"]; !ok {
				add("%d: empty body, the document promises %s", x.Status, strings.Join(slices.Sorted(maps.Keys(content)), ", "))
			}
		}
		return
	}
	if len(content) == 0 {
		if x.Method != http.MethodHead {
			add("%d: the document promises no body, the answer has %d bytes: %s", x.Status, len(x.RespBody), clip(x.RespBody))
		}
		return
	}
	mt, key := mediaType(x.RespHead.Get("Content-Type"), content)
	if key == "" {
		add("%d: media type %q is not documented (documented: %s)", x.Status, mt,
			strings.Join(slices.Sorted(maps.Keys(content)), ", "))
		return
	}
	if x.Method == http.MethodHead || !isJSON(key) {
		return
	}
	media, _ := content[key].(map[string]any)
	if _, ok := media["schema"]; !ok {
		return
	}
	for _, m := range v.validate(ptr+"/content/"+escape(key)+"/schema", x.RespBody) {
		add("%d %s body: %s", x.Status, key, m)
	}
}

// checkRequest checks an accepted request.
func (v *Validator) checkRequest(op *operation, x *Exchange, values map[string]string, add func(string, ...any)) {
	v.checkSecurity(op, x, add)
	query := x.URL.Query()
	known := map[string]bool{}
	for i, p := range op.params {
		name, _ := p["name"].(string)
		in, _ := p["in"].(string)
		required, _ := p["required"].(bool)
		var vals []string
		switch in {
		case "path":
			vals = []string{values[name]}
		case "query":
			known[name] = true
			vals = query[name]
		case "header":
			vals = x.Header.Values(name)
		default:
			continue
		}
		if len(vals) == 0 {
			if required {
				add("the required %s parameter %s is missing", in, name)
			}
			continue
		}
		sch, _ := p["schema"].(map[string]any)
		if sch == nil {
			continue
		}
		ptr := v.paramPointer(op, i) + "/schema"
		for _, val := range vals {
			for _, m := range v.validateValue(ptr, sch, val) {
				add("%s parameter %s=%q: %s", in, name, val, m)
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(query)) {
		if !known[n] {
			add("query parameter %q is not documented", n)
		}
	}
	rb, ok := op.node["requestBody"]
	if !ok {
		if len(bytes.TrimSpace(x.Body)) > 0 {
			add("the request has a body (%s) and the operation documents none", clip(x.Body))
		}
		return
	}
	body, _ := v.resolve(rb).(map[string]any)
	if len(bytes.TrimSpace(x.Body)) == 0 {
		if req, _ := body["required"].(bool); req {
			add("the request body is required and the request has none")
		}
		return
	}
	content, _ := body["content"].(map[string]any)
	ct := x.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/json"
	}
	mt, key := mediaType(ct, content)
	if _, ok := content["application/json"]; ok && key == "" {
		// The gate reads a body as JSON whatever its Content-Type says
		// (curl -d sends application/x-www-form-urlencoded).
		key = "application/json"
	}
	if key == "" {
		add("request media type %q is not documented (documented: %s)", mt, strings.Join(slices.Sorted(maps.Keys(content)), ", "))
		return
	}
	if !isJSON(key) {
		return
	}
	media, _ := content[key].(map[string]any)
	if _, ok := media["schema"]; !ok {
		return
	}
	ptr := refPointer(rb, op.pointer+"/requestBody") + "/content/" + escape(key) + "/schema"
	for _, m := range v.validate(ptr, x.Body) {
		add("accepted request %s body: %s", key, m)
	}
}

// paramPointer is the JSON pointer of the operation's i-th parameter
// (after the path item's own).
func (v *Validator) paramPointer(op *operation, i int) string {
	itemPtr := op.pointer[:strings.LastIndexByte(op.pointer, '/')]
	item, _ := v.at(itemPtr).(map[string]any)
	common, _ := item["parameters"].([]any)
	if i < len(common) {
		return refPointer(common[i], itemPtr+"/parameters/"+strconv.Itoa(i))
	}
	own, _ := op.node["parameters"].([]any)
	j := i - len(common)
	return refPointer(own[j], op.pointer+"/parameters/"+strconv.Itoa(j))
}

// checkSecurity checks that an accepted request carried the credentials
// of one of the operation's security requirements. The agent token may
// also come in the body's agent_token member where the operation says so
// (x-agent-token-in-body).
func (v *Validator) checkSecurity(op *operation, x *Exchange, add func(string, ...any)) {
	reqs, ok := op.node["security"].([]any)
	if !ok {
		reqs, _ = v.doc["security"].([]any)
	}
	if len(reqs) == 0 {
		return
	}
	var names []string
	for _, r := range reqs {
		m, _ := r.(map[string]any)
		if len(m) == 0 {
			return // an empty requirement: anonymous access
		}
		all := true
		for n := range m {
			names = append(names, n)
			all = all && v.present(n, x)
		}
		if all {
			return
		}
	}
	if inBody, _ := op.node["x-agent-token-in-body"].(bool); inBody && hasMember(x.Body, "agent_token") {
		return
	}
	add("the request was accepted without the credentials of any security requirement (%s)", strings.Join(names, ", "))
}

// present reports whether the credential of security scheme n is in x.
func (v *Validator) present(n string, x *Exchange) bool {
	s := v.schemes[n]
	switch s["type"] {
	case "apiKey":
		name, _ := s["name"].(string)
		return x.Header.Get(name) != ""
	case "http":
		scheme, _ := s["scheme"].(string)
		a := x.Header.Get("Authorization")
		return len(a) > len(scheme) && strings.EqualFold(a[:len(scheme)+1], scheme+" ")
	}
	return false
}

// hasMember reports whether the JSON object body, or its data member (a
// structured-mode CloudEvent's), has the member name.
func hasMember(body []byte, name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	if _, ok := m[name]; ok {
		return true
	}
	var data map[string]json.RawMessage
	if json.Unmarshal(m["data"], &data) != nil {
		return false
	}
	_, ok := data[name]
	return ok
}

// validate checks a JSON body against the schema at ptr.
func (v *Validator) validate(ptr string, body []byte) []string {
	doc, err := schemas.Decode(body)
	if err != nil {
		return []string{fmt.Sprintf("not one JSON document (%v): %s", err, clip(body))}
	}
	return v.validateDoc(ptr, doc, body)
}

func (v *Validator) validateDoc(ptr string, doc any, body []byte) []string {
	s, err := v.schemaAt(ptr)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, vi := range schemas.ViolationsOf(s.Validate(doc)) {
		out = append(out, fmt.Sprintf("at %q: %s (schema %s%s); body %s", vi.InstanceLocation, vi.Message,
			schemaName(ptr), vi.KeywordLocation, clip(body)))
	}
	return out
}

// schemaName shortens a schema pointer for messages.
func schemaName(ptr string) string { return "#" + ptr + " → " }

// validateValue checks a parameter value (a string) against its schema:
// as an integer, number or boolean where the schema's type says so.
func (v *Validator) validateValue(ptr string, sch map[string]any, val string) []string {
	var doc any = val
	switch sch["type"] {
	case "integer", "number":
		if _, err := strconv.ParseFloat(val, 64); err != nil {
			return []string{"not a number"}
		}
		doc = json.Number(val)
	case "boolean":
		b, err := strconv.ParseBool(val)
		if err != nil {
			return []string{"not a boolean"}
		}
		doc = b
	}
	return v.validateDoc(ptr, doc, []byte(strconv.Quote(val)))
}

// mediaType returns the media type of a Content-Type header and the key
// of content it matches ("" for none): exact, then "type/*", then "*/*".
func mediaType(header string, content map[string]any) (mt, key string) {
	mt, _, err := mime.ParseMediaType(header)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(header))
	}
	for _, k := range []string{mt, mt[:max(0, strings.IndexByte(mt, '/'))] + "/*", "*/*"} {
		if _, ok := content[k]; ok {
			return mt, k
		}
	}
	return mt, ""
}

func isJSON(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// clip shortens a body for a message.
func clip(b []byte) string {
	const n = 300
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "…"
	}
	return strconv.Quote(string(b))
}
