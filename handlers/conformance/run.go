package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/schemas"
)

// Bounds of the runner's exchanges.
const (
	// MaxResponseBytes bounds one response body; a longer one fails its
	// vector.
	MaxResponseBytes = 4 << 20
	// MaxRedirects bounds the redirects followed for one request (same
	// host only, without credentials).
	MaxRedirects = 3
	// MaxRateLimitRetries bounds how often one request is repeated after
	// a 429 (QWED-AUTH-004), each after the server's Retry-After, at most
	// MaxRetryAfter.
	MaxRateLimitRetries = 3
	// MaxRetryAfter caps one wait for a rate limit.
	MaxRetryAfter = 5 * time.Second
	// DefaultTimeout bounds one request when Config.Timeout is zero.
	DefaultTimeout = 30 * time.Second
	// WrongAPIKey is the key the AUTH-002 vector sends: no server issues it.
	WrongAPIKey = "qwed_conformance_not_a_key"
	// JWKSPath is where a server publishes its attestation keys; the
	// attestation vector verifies the token against them when present.
	JWKSPath = "/.well-known/jwks.json"
)

// EngineIDs are the engine ids of QWED protocol v1.0 §4.1.
var EngineIDs = []string{"math", "logic", "stats", "fact", "code", "sql", "image", "reasoning"}

// Config is what Run needs.
type Config struct {
	// URL is the server's base URL (http or https); the vectors' paths are
	// appended to it.
	URL string
	// APIKey, when set, is sent as X-API-Key (§3.3) and enables the
	// authentication vectors.
	APIKey string
	// Timeout bounds each request (DefaultTimeout when zero).
	Timeout time.Duration
	// Transport, when set, carries the requests (tests; TLS settings).
	Transport http.RoundTripper
	// Vectors to run; the embedded set when nil.
	Vectors []Vector
}

// Verdict is the result of one vector.
type Verdict string

// The verdicts.
const (
	Pass Verdict = "PASS"
	Fail Verdict = "FAIL"
	Skip Verdict = "SKIP"
)

// Outcome is one vector's result.
type Outcome struct {
	ID      string  `json:"id"`
	Section string  `json:"section"`
	Level   Level   `json:"level"`
	Verdict Verdict `json:"verdict"`
	// Reason says why a vector failed or was skipped, or notes a limit of
	// a pass.
	Reason string `json:"reason,omitempty"`
	// HTTP is the answer's status code (0 when none came).
	HTTP int `json:"http,omitempty"`
}

// LevelResult is the tally of one level.
type LevelResult struct {
	Level   Level `json:"level"`
	Passed  int   `json:"passed"`
	Failed  int   `json:"failed"`
	Skipped int   `json:"skipped"`
	// Reached: this level's requirements and every lower level's are met.
	Reached bool `json:"reached"`
}

// Report is the result of a run.
type Report struct {
	URL      string        `json:"url"`
	Outcomes []Outcome     `json:"outcomes"`
	Levels   []LevelResult `json:"levels"`
	// Engines are the §4.1 engines that answered a Basic vector with a
	// verdict (Basic needs at least one).
	Engines []string `json:"engines"`
	// Reached is the highest level reached, None if not Basic.
	Reached Level `json:"reached"`
}

// Reaches reports whether the report reached level l.
func (r *Report) Reaches(l Level) bool {
	for _, lr := range r.Levels {
		if lr.Level == l {
			return lr.Reached
		}
	}
	return false
}

// Run sends every vector to the server and judges the answers. It returns
// an error only for a configuration it cannot run (a bad URL); a server
// that cannot be reached fails every vector.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	base, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("running conformance: --url %q must be an http:// or https:// URL", cfg.URL)
	}
	if base.User != nil {
		return nil, errors.New("running conformance: the URL must not carry credentials (use --api-key)")
	}
	r := &runner{cfg: cfg, base: base.String(), client: newClient(cfg.Transport)}
	if r.cfg.Timeout <= 0 {
		r.cfg.Timeout = DefaultTimeout
	}
	vs := cfg.Vectors
	if vs == nil {
		vs = Vectors()
	}
	rep := &Report{URL: r.base, Engines: []string{}}
	for _, v := range vs {
		o := r.run(ctx, v)
		rep.Outcomes = append(rep.Outcomes, o)
		if v.Group == GroupFormat && o.Verdict == Pass && r.answered && !slices.Contains(rep.Engines, v.Engine) {
			rep.Engines = append(rep.Engines, v.Engine)
		}
	}
	rep.tally()
	return rep, nil
}

// tally fills Levels and Reached: a level is reached when none of its
// vectors (or a lower level's) failed, and Basic also needs an engine.
func (rep *Report) tally() {
	rep.Reached = None
	ok := true
	for _, l := range Levels {
		lr := LevelResult{Level: l}
		for _, o := range rep.Outcomes {
			if o.Level != l {
				continue
			}
			switch o.Verdict {
			case Pass:
				lr.Passed++
			case Fail:
				lr.Failed++
			default:
				lr.Skipped++
			}
		}
		ok = ok && lr.Failed == 0 && (l != Basic || len(rep.Engines) > 0)
		lr.Reached = ok
		if ok {
			rep.Reached = l
		}
		rep.Levels = append(rep.Levels, lr)
	}
}

type runner struct {
	cfg    Config
	base   string
	client *http.Client
	// answered: the last format vector got a verdict from its engine.
	answered bool
}

// newClient is an HTTP client that follows at most MaxRedirects
// redirects, only to the same scheme and host, dropping the credential
// headers on every redirect.
func newClient(t http.RoundTripper) *http.Client {
	return &http.Client{Transport: t, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= MaxRedirects {
			return fmt.Errorf("refusing redirect %d: at most %d are followed", len(via)+1, MaxRedirects)
		}
		first := via[0].URL
		if req.URL.Host != first.Host || req.URL.Scheme != first.Scheme {
			return fmt.Errorf("refusing a redirect from %s://%s to %s://%s: only the same scheme and host are followed", first.Scheme, first.Host, req.URL.Scheme, req.URL.Host)
		}
		req.Header.Del("X-API-Key")
		req.Header.Del("Authorization")
		return nil
	}}
}

// answer is one exchange.
type answer struct {
	status int
	body   []byte
}

// do sends one request, bounded by the timeout and MaxResponseBytes; a
// 429 is repeated after the server's Retry-After (1 s when absent or
// unreadable, MaxRetryAfter at most), MaxRateLimitRetries times at most,
// so a server's rate limit is not judged as its answer.
func (r *runner) do(ctx context.Context, method, path, key string, body []byte) (answer, error) {
	for i := 0; ; i++ {
		a, wait, err := r.once(ctx, method, path, key, body)
		if err != nil || a.status != http.StatusTooManyRequests || i == MaxRateLimitRetries {
			return a, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return a, fmt.Errorf("waiting out a rate limit: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// once is one exchange of do; wait is the answer's Retry-After.
func (r *runner) once(ctx context.Context, method, path, key string, body []byte) (answer, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return answer{}, 0, fmt.Errorf("building the request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("QWED-Protocol-Version", "1.0")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return answer{}, 0, fmt.Errorf("sending %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return answer{}, 0, fmt.Errorf("reading the answer to %s %s: %w", method, path, err)
	}
	if len(b) > MaxResponseBytes {
		return answer{status: resp.StatusCode}, 0, fmt.Errorf("the answer to %s %s exceeds %d bytes", method, path, MaxResponseBytes)
	}
	wait := time.Second
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n >= 0 {
		wait = min(time.Duration(n)*time.Second, MaxRetryAfter)
	}
	return answer{status: resp.StatusCode, body: b}, wait, nil
}

// run sends one vector and judges its answer.
func (r *runner) run(ctx context.Context, v Vector) Outcome {
	r.answered = false
	o := Outcome{ID: v.ID, Section: v.Section, Level: v.Level}
	key := r.cfg.APIKey
	switch v.Auth {
	case "none", "wrong":
		if r.cfg.APIKey == "" {
			o.Verdict, o.Reason = Skip, "needs --api-key (without one the server is taken to not require authentication)"
			return o
		}
		key = ""
		if v.Auth == "wrong" {
			key = WrongAPIKey
		}
	}
	if v.Group == GroupStatus {
		return r.runCandidates(ctx, v, key, o)
	}
	var body []byte
	if v.method() == "POST" {
		b, err := v.body()
		if err != nil {
			o.Verdict, o.Reason = Fail, err.Error()
			return o
		}
		body = b
	}
	a, err := r.do(ctx, v.method(), v.path(), key, body)
	o.HTTP = a.status
	if err != nil {
		o.Verdict, o.Reason = Fail, err.Error()
		return o
	}
	if v.Optional && (a.status == http.StatusNotFound || a.status == http.StatusMethodNotAllowed) {
		o.Verdict, o.Reason = Skip, fmt.Sprintf("%s %s answered %d: the protocol does not define this route", v.method(), v.path(), a.status)
		return o
	}
	var note string
	m, err := r.judge(v, body, a)
	if err == nil && v.Group == GroupAttestation {
		note, err = r.checkAttestation(ctx, m)
	}
	if err != nil {
		o.Verdict, o.Reason = Fail, err.Error()
		return o
	}
	o.Verdict, o.Reason = Pass, note
	return o
}

// runCandidates runs a status vector: its candidates in order until one
// gets the expected answer; the reason of a failure lists every try.
func (r *runner) runCandidates(ctx context.Context, v Vector, key string, o Outcome) Outcome {
	var tried []string
	for i, c := range v.Candidates {
		a, err := r.do(ctx, v.method(), v.path(), key, c)
		o.HTTP = a.status
		if err == nil {
			if _, err = r.checkResponse(v, a); err == nil {
				o.Verdict = Pass
				return o
			}
		}
		tried = append(tried, fmt.Sprintf("candidate %d: %v", i, err))
	}
	o.Verdict, o.Reason = Fail, "no candidate produced it: "+strings.Join(tried, "; ")
	return o
}

// judge checks an answer as the vector's group demands (all but the
// attestation's signature, which needs the server's keys); sent is the
// body sent. The single answer's document is returned when there is one.
func (r *runner) judge(v Vector, sent []byte, a answer) (map[string]any, error) {
	switch v.Group {
	case GroupEngines:
		return nil, checkEngines(a)
	case GroupBatch:
		return nil, checkBatch(v, sent, a)
	default:
		return r.checkResponse(v, a)
	}
}

// statusHTTP is the HTTP code of each status (§6.2).
var statusHTTP = map[string]int{"VERIFIED": 200, "FAILED": 200, "CORRECTED": 200, "BLOCKED": 403, "ERROR": 500, "TIMEOUT": 504, "UNSUPPORTED": 400}

// codeHTTP is the HTTP code of each error code (§8.3); it overrides
// statusHTTP for an answer carrying the code.
var codeHTTP = map[string]int{
	"QWED-REQ-001": 400, "QWED-REQ-002": 400, "QWED-REQ-003": 400, "QWED-REQ-004": 400, "QWED-REQ-005": 400,
	"QWED-AUTH-001": 401, "QWED-AUTH-002": 401, "QWED-AUTH-003": 403, "QWED-AUTH-004": 429,
	"QWED-ENG-001": 500, "QWED-ENG-002": 500, "QWED-ENG-003": 504, "QWED-ENG-004": 500,
	"QWED-SEC-001": 403, "QWED-SEC-002": 403, "QWED-SEC-003": 403, "QWED-SYS-001": 500, "QWED-SYS-002": 503,
}

// checkResponse judges a single verification answer: the §6.1 schema,
// §9.2's protocol_version, the HTTP code consistent with the status and
// code (§6.2, §8.3), then the vector's expectations.
func (r *runner) checkResponse(v Vector, a answer) (map[string]any, error) {
	doc, err := schemas.Decode(a.body)
	if err != nil {
		return nil, fmt.Errorf("HTTP %d: the answer is not JSON: %.120q", a.status, a.body)
	}
	if vs := schemas.Response().Validate(doc); len(vs) > 0 {
		return nil, fmt.Errorf("HTTP %d: the answer does not follow the §6.1 response schema: %s", a.status, vs[0])
	}
	m, _ := doc.(map[string]any)
	status, _ := m["status"].(string)
	engine, _ := m["engine"].(string)
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	got := fmt.Sprintf("HTTP %d %s", a.status, status)
	if code != "" {
		got += " " + code
	}
	if engine != "" {
		got += " (engine " + engine + ")"
	}
	if verified, _ := m["verified"].(bool); verified != (status == "VERIFIED") {
		return m, fmt.Errorf("%s: verified is %v for status %s (§6.1)", got, verified, status)
	}
	if want, ok := codeHTTP[code]; ok && a.status != want {
		return m, fmt.Errorf("%s: §8.3 answers %s with HTTP %d", got, code, want)
	} else if want := statusHTTP[status]; !ok && a.status != want {
		return m, fmt.Errorf("%s: §6.2 answers %s with HTTP %d", got, status, want)
	}
	if md, _ := m["metadata"].(map[string]any); v.Group == GroupFormat || v.Group == GroupEngine {
		if pv, _ := md["protocol_version"].(string); !strings.HasPrefix(pv, "1.") {
			return m, fmt.Errorf("%s: metadata.protocol_version is %q, want 1.x (§9.2 MUST)", got, pv)
		}
	}
	decided := slices.Contains([]string{"VERIFIED", "FAILED", "CORRECTED", "BLOCKED"}, status)
	if v.Engine != "" && decided && engine != v.Engine && status != "BLOCKED" {
		return m, fmt.Errorf("%s: the verdict names engine %q, want %q", got, engine, v.Engine)
	}
	r.answered = decided && engine == v.Engine
	x := v.Expect
	if x.HTTP != 0 && (a.status != x.HTTP || !slices.Contains(x.Status, status)) {
		return m, fmt.Errorf("%s, want HTTP %d %s", got, x.HTTP, strings.Join(x.Status, "|"))
	}
	if v.Group == GroupEngine && engine != v.Engine {
		return m, fmt.Errorf("%s: want the verdict of engine %q", got, v.Engine)
	}
	if x.ErrorCode != "" && code != x.ErrorCode {
		return m, fmt.Errorf("%s, want error code %s", got, x.ErrorCode)
	}
	res, _ := m["result"].(map[string]any)
	for k, want := range x.Result {
		if !reflect.DeepEqual(res[k], want) {
			return m, fmt.Errorf("%s: result.%s is %v, want %v", got, k, res[k], want)
		}
	}
	for _, k := range x.ResultKeys {
		if _, ok := res[k]; !ok {
			return m, fmt.Errorf("%s: result has no %s", got, k)
		}
	}
	d, _ := e["details"].(map[string]any)
	for _, k := range x.DetailsKeys {
		if _, ok := d[k]; !ok {
			return m, fmt.Errorf("%s: error.details has no %s (§8.4)", got, k)
		}
	}
	return m, nil
}

// checkAttestation checks the attestation object of an answer: present
// and non-empty; when the server publishes keys at JWKSPath, its token
// must verify against them and its claims name the answer's status and
// engine. The note says when the signature could not be checked.
func (r *runner) checkAttestation(ctx context.Context, m map[string]any) (string, error) {
	at, _ := m["attestation"].(map[string]any)
	if len(at) == 0 {
		return "", errors.New("include_attestation was set but the answer carries no attestation object")
	}
	ks, err := r.do(ctx, "GET", JWKSPath, "", nil)
	if err != nil {
		return "", err
	}
	if ks.status == http.StatusNotFound {
		return "no keys published at " + JWKSPath + ": the signature was not checked", nil
	}
	if ks.status != http.StatusOK {
		return "", fmt.Errorf("GET %s answered %d", JWKSPath, ks.status)
	}
	token, _ := at["token"].(string)
	if token == "" {
		return "", fmt.Errorf("the server publishes keys at %s but the attestation carries no token", JWKSPath)
	}
	claims, err := attest.Verify(token, ks.body)
	if err != nil {
		return "", fmt.Errorf("the attestation does not verify against %s: %w", JWKSPath, err)
	}
	if claims.Status != m["status"] || claims.Engine != m["engine"] {
		return "", fmt.Errorf("the attestation's claims (status %s, engine %s) do not bind the answer (status %v, engine %v)", claims.Status, claims.Engine, m["status"], m["engine"])
	}
	return "", nil
}

// checkBatch judges a batch answer (§6.4): the batch response schema,
// one item per request item in order, the summary's total, and the
// vector's expected item statuses.
func checkBatch(v Vector, sent []byte, a answer) error {
	if a.status != v.Expect.HTTP {
		return fmt.Errorf("HTTP %d, want %d: %.200s", a.status, v.Expect.HTTP, a.body)
	}
	doc, err := schemas.Decode(a.body)
	if err != nil {
		return fmt.Errorf("the answer is not JSON: %.120q", a.body)
	}
	if vs := schemas.BatchResponse().Validate(doc); len(vs) > 0 {
		return fmt.Errorf("the answer does not follow the §6.4 batch response schema: %s", vs[0])
	}
	var req struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(sent, &req); err != nil {
		return fmt.Errorf("reading the batch sent: %w", err)
	}
	m, _ := doc.(map[string]any)
	items, _ := m["items"].([]any)
	if b, _ := m["batch"].(bool); !b {
		return errors.New("the answer lacks batch: true (§6.4)")
	}
	if len(items) != len(req.Items) {
		return fmt.Errorf("%d items answered for %d sent", len(items), len(req.Items))
	}
	sum, _ := m["summary"].(map[string]any)
	if total, _ := sum["total"].(json.Number); total.String() != fmt.Sprint(len(req.Items)) {
		return fmt.Errorf("summary.total is %v, want %d", sum["total"], len(req.Items))
	}
	for i, want := range v.Expect.Items {
		if i >= len(items) {
			break
		}
		it, _ := items[i].(map[string]any)
		if want != "" && it["status"] != want {
			return fmt.Errorf("item %d is %v, want %s", i, it["status"], want)
		}
	}
	return nil
}

// checkEngines judges an engines listing: each engine of §4.1 present
// with the §4.2 capabilities document (name, version, capabilities,
// input_types, output_types). A bare array or {"engines": [...]} is read.
func checkEngines(a answer) error {
	if a.status != http.StatusOK {
		return fmt.Errorf("HTTP %d, want 200", a.status)
	}
	var list []map[string]any
	if err := json.Unmarshal(a.body, &list); err != nil {
		var doc struct {
			Engines []map[string]any `json:"engines"`
		}
		if err := json.Unmarshal(a.body, &doc); err != nil {
			return fmt.Errorf("the listing is neither an array nor {\"engines\": [...]}: %.120q", a.body)
		}
		list = doc.Engines
	}
	got := map[string]map[string]any{}
	for _, e := range list {
		id, _ := e["engine_id"].(string)
		got[id] = e
	}
	var missing []string
	for _, id := range EngineIDs {
		e, ok := got[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		for _, k := range []string{"name", "version"} {
			if s, _ := e[k].(string); s == "" {
				return fmt.Errorf("engine %s: its §4.2 document lacks %s", id, k)
			}
		}
		if c, _ := e["capabilities"].(map[string]any); len(c) == 0 {
			return fmt.Errorf("engine %s: its §4.2 document has no capabilities", id)
		}
		for _, k := range []string{"input_types", "output_types"} {
			if l, _ := e[k].([]any); len(l) == 0 {
				return fmt.Errorf("engine %s: its §4.2 document has no %s", id, k)
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("engines missing from the listing: %s", strings.Join(missing, ", "))
	}
	return nil
}
