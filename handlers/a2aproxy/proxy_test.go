package a2aproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/httpapi"
	"github.com/agentgate/agentgate/schemas/openapi"
)

// upstreamAgent is a minimal A2A agent over real HTTP: its card names its
// JSON-RPC endpoint /rpc, which echoes the text of the first part and
// records the messageIds it was sent.
type upstreamAgent struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []string
	// hold, when set, blocks every answer until it is closed.
	hold chan struct{}
	// card, when set, replaces the card's members.
	card map[string]any
	// cards counts the card fetches.
	cards int
	// streamGone, when set, makes a stream hang after its first event
	// until its request is cancelled, then closes streamGone (or until
	// streamEnd is closed).
	streamGone, streamEnd chan struct{}
}

func newUpstream(t *testing.T) *upstreamAgent {
	t.Helper()
	u := &upstreamAgent{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.cards++
		u.mu.Unlock()
		card := map[string]any{
			"name": "Treasury Agent", "version": "1.0.0",
			"supportedInterfaces": []any{
				map[string]any{"url": u.srv.URL + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
				map[string]any{"url": u.srv.URL + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
			},
			"capabilities":    map[string]any{"streaming": true, "pushNotifications": true},
			"securitySchemes": map[string]any{"bearer": map[string]any{"httpAuthSecurityScheme": map[string]any{"scheme": "Bearer"}}},
			"signatures":      []any{map[string]any{"protected": "x", "signature": "y"}},
			"skills":          []any{map[string]any{"id": "echo", "name": "Echo"}},
		}
		for k, v := range u.card {
			card[k] = v
		}
		_ = json.NewEncoder(w).Encode(card)
	})
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Message struct {
					MessageID string `json:"messageId"`
					Parts     []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"message"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if r.Header.Get("X-Api-Key") != "" || r.Header.Get("Authorization") != "" {
			http.Error(w, "the gate forwarded the caller's credentials", http.StatusTeapot)
			return
		}
		u.mu.Lock()
		u.got = append(u.got, req.Params.Message.MessageID)
		hold := u.hold
		u.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		text := ""
		if len(req.Params.Message.Parts) > 0 {
			text = req.Params.Message.Parts[0].Text
		}
		result := fmt.Sprintf(`{"message":{"messageId":"answer-%s","role":"ROLE_AGENT","parts":[{"text":%q}]}}`, req.Params.Message.MessageID, "echo: "+text)
		if req.Method == "SendStreamingMessage" || req.Method == "message/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 3 {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"statusUpdate\":{\"n\":%d}}}\n\n", req.ID, i)
				w.(http.Flusher).Flush()
				if u.streamGone != nil {
					select {
					case <-r.Context().Done():
						close(u.streamGone)
					case <-u.streamEnd:
					}
					return
				}
			}
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", req.ID, result)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	})
	u.srv = httptest.NewServer(mux)
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstreamAgent) received() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.got...)
}

// gate is a real embedded gate behind its HTTP API: the proxy's
// interceptor serves each part to its POST /a2a/intercept. Principals
// org_a and org_b trust procurement and treasury in their own boundaries
// (keys ka, kb); org_c trusts no one (kc).
type gate struct {
	g   *gatetest.Gate
	api http.Handler
	// keys by name: ka, kb, kc.
	keys map[string]string
}

func newGate(t *testing.T) *gate {
	t.Helper()
	g := gatetest.StartWith(t, embedded.Options{DataDir: t.TempDir(), AdminKey: "admin", Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { g.Stop(t) })
	api := openapi.Hook(t, httpapi.New(httpapi.Config{Gate: g.Worker, Store: g.Store, AdminKeyHash: g.AdminKeyHash, JWKS: g.Keyring.JWKS, Logger: slog.New(slog.DiscardHandler)}))
	gt := &gate{g: g, api: api, keys: map[string]string{}}
	for name, principal := range map[string]string{"ka": "org_a", "kb": "org_b", "kc": "org_c"} {
		key, _, err := command.IssueKey(context.Background(), g.Worker, principal)
		if err != nil {
			t.Fatal(err)
		}
		gt.keys[name] = key
	}
	for _, k := range []string{"ka", "kb"} {
		for _, agent := range []string{"procurement", "treasury"} {
			rec := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/a2a/boundary/trust/"+agent, nil)
			r.Header.Set("X-API-Key", gt.keys[k])
			api.ServeHTTP(rec, r)
			if rec.Code != http.StatusOK {
				t.Fatalf("trusting %s: %d %s", agent, rec.Code, rec.Body)
			}
		}
	}
	return gt
}

// intercepted returns the A2A commands the gate recorded (decided or
// refused), with their request ids, in order.
func (g *gate) intercepted(t *testing.T) (msgs []a2a.Message, keys []string) {
	t.Helper()
	for _, ev := range gatetest.LogEvents(t, g.g.Log) {
		if ev.Command != nil && ev.Command.A2A != nil {
			msgs = append(msgs, *ev.Command.A2A)
			keys = append(keys, ev.Command.Request.ID)
		}
	}
	return msgs, keys
}

type fixture struct {
	up    *upstreamAgent
	gate  *gate
	proxy *httptest.Server
}

func newFixture(t *testing.T, mod func(*Config)) *fixture {
	t.Helper()
	f := &fixture{up: newUpstream(t), gate: newGate(t)}
	u, err := ParseUpstream("treasury=" + f.up.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Upstreams: []Upstream{u}, Interceptor: InProcess(f.gate.api), Logger: slog.New(slog.DiscardHandler)}
	if mod != nil {
		mod(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.proxy = httptest.NewServer(openapi.Hook(t, Wrap(p, f.gate.api)))
	t.Cleanup(f.proxy.Close)
	return f
}

// rpc posts body to the proxied agent with the API key named key ("" for
// none) and returns the HTTP status and the decoded answer.
func (f *fixture) rpc(t *testing.T, key, body string) (int, map[string]json.RawMessage) {
	t.Helper()
	r, _ := http.NewRequest(http.MethodPost, f.proxy.URL+"/a2a/proxy/treasury", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if key != "" {
		r.Header.Set("X-API-Key", f.gate.keys[key])
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("answer %q: %v", raw, err)
	}
	return resp.StatusCode, m
}

type rpcErr struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func errorOf(t *testing.T, m map[string]json.RawMessage) rpcErr {
	t.Helper()
	var e rpcErr
	if err := json.Unmarshal(m["error"], &e); err != nil || e.Code == 0 {
		t.Fatalf("want a JSON-RPC error, got %s", mustJSON(m))
	}
	return e
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func send(id, messageID, sender string, parts ...string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"SendMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[%s],"metadata":{"sender_agent_id":%q}}}}`,
		id, messageID, strings.Join(parts, ","), sender)
}

const financeBad = `{"data":{"data":{"claimed_total":999.99,"line_items":[{"description":"Widget A","amount":50,"quantity":2},{"description":"Widget B","amount":25,"quantity":2}]}},"metadata":{"payload_type":"financial_transaction"}}`

func TestProxy_CardIsRewrittenToTheGate(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.PublicURL = "https://gate.example" })
	for _, path := range []string{CardPath, OldCardPath} {
		resp, err := http.Get(f.proxy.URL + "/a2a/proxy/treasury/" + path)
		if err != nil {
			t.Fatal(err)
		}
		var card map[string]json.RawMessage
		err = json.NewDecoder(resp.Body).Decode(&card)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, %v", path, resp.StatusCode, err)
		}
		want := `[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://gate.example/a2a/proxy/treasury"}]`
		if got := string(card["supportedInterfaces"]); got != want {
			t.Errorf("%s: supportedInterfaces %s, want %s", path, got, want)
		}
		for _, gone := range []string{"signatures", "securitySchemes"} {
			if _, ok := card[gone]; ok {
				t.Errorf("%s: %s is still in the rewritten card", path, gone)
			}
		}
		if got := string(card["capabilities"]); got != `{"streaming":true}` {
			t.Errorf("%s: capabilities %s, want streaming only", path, got)
		}
		if got := string(card["name"]); got != `"Treasury Agent"` {
			t.Errorf("%s: name %s: the card's own members must be kept", path, got)
		}
	}
}

func TestProxy_CardOnAnotherOriginIsRefused(t *testing.T) {
	other := newUpstream(t)
	f := newFixture(t, nil)
	f.up.card = map[string]any{"supportedInterfaces": []any{map[string]any{"url": other.srv.URL + "/rpc", "protocolBinding": "JSONRPC"}}}
	resp, err := http.Get(f.proxy.URL + "/a2a/proxy/treasury/" + CardPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("card naming another origin: status %d, want 502", resp.StatusCode)
	}
	status, m := f.rpc(t, "ka", send("1", "m-ssrf", "procurement", `{"text":"hi"}`))
	if e := errorOf(t, m); status != http.StatusBadGateway || e.Code != CodeUpstream {
		t.Fatalf("send with a card on another origin: %d %+v", status, e)
	}
	if got := other.received(); len(got) != 0 {
		t.Fatalf("the other origin was sent %v", got)
	}
}

func TestProxy_TextIsInterceptedThenForwardedAndAnsweredAsIs(t *testing.T) {
	f := newFixture(t, nil)
	status, m := f.rpc(t, "ka", send(`"r1"`, "m-1", "procurement", `{"text":"Hello"}`))
	if status != http.StatusOK || string(m["id"]) != `"r1"` {
		t.Fatalf("status %d, answer %s", status, mustJSON(m))
	}
	if got := string(m["result"]); !strings.Contains(got, `"echo: Hello"`) {
		t.Fatalf("result %s, want the upstream's echo", got)
	}
	msgs, _ := f.gate.intercepted(t)
	if len(msgs) != 1 {
		t.Fatalf("intercepted %d messages, want 1", len(msgs))
	}
	want := a2a.Message{SenderAgentID: "procurement", ReceiverAgentID: "treasury", PayloadType: a2a.PayloadGeneral, Payload: json.RawMessage(`{"text":"Hello"}`)}
	if mustJSON(msgs[0]) != mustJSON(want) {
		t.Fatalf("intercepted %s, want %s", mustJSON(msgs[0]), mustJSON(want))
	}
	if got := f.up.received(); len(got) != 1 || got[0] != "m-1" {
		t.Fatalf("upstream received %v", got)
	}
}

func TestProxy_BlockedPartIsAJSONRPCErrorCarryingTheVerdict(t *testing.T) {
	f := newFixture(t, nil)
	status, m := f.rpc(t, "ka", send("7", "m-bad", "procurement", `{"text":"invoice"}`, financeBad))
	e := errorOf(t, m)
	if status != http.StatusOK || e.Code != CodeNotForwarded || string(m["id"]) != "7" {
		t.Fatalf("status %d error %+v", status, e)
	}
	var v map[string]any
	if err := json.Unmarshal(e.Data, &v); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"status": "blocked", "engine_used": "finance_guard"} {
		if v[k] != want {
			t.Errorf("data.%s = %v, want %v", k, v[k], want)
		}
	}
	jwt, _ := v["attestation_jwt"].(string)
	reason, _ := v["reason"].(string)
	if strings.Count(jwt, ".") != 2 || v["trace_id"] == "" || !strings.Contains(reason, "claimed_total=999.99") {
		t.Errorf("verdict %s: want a signed attestation, a trace id and the guard's reason", e.Data)
	}
	if !strings.Contains(e.Message, "part 1") {
		t.Errorf("message %q does not name the part", e.Message)
	}
	msgs, _ := f.gate.intercepted(t)
	if len(msgs) != 2 || msgs[1].PayloadType != a2a.PayloadFinancial || !strings.HasPrefix(string(msgs[1].Payload), `{"data":{"claimed_total":999.99`) {
		t.Fatalf("intercepted %s", mustJSON(msgs))
	}
	if got := f.up.received(); len(got) != 0 {
		t.Fatalf("a blocked message reached the upstream: %v", got)
	}
}

func TestProxy_RefusalCarriesTheGateError(t *testing.T) {
	f := newFixture(t, nil)
	status, m := f.rpc(t, "", send("1", "m-nokey", "procurement", `{"text":"hi"}`))
	e := errorOf(t, m)
	// No API key and no agent token: the endpoint's own refusal.
	if status != http.StatusUnauthorized || e.Code != CodeRefused || !strings.Contains(string(e.Data), `"code":"QWED-AGENT-002"`) {
		t.Fatalf("status %d error %+v", status, e)
	}
	if got := f.up.received(); len(got) != 0 {
		t.Fatalf("a refused message reached the upstream: %v", got)
	}
}

func TestProxy_RetryIsAnsweredFromMemoryNotForwardedTwice(t *testing.T) {
	f := newFixture(t, nil)
	_, first := f.rpc(t, "ka", send("1", "m-once", "procurement", `{"text":"pay"}`))
	_, again := f.rpc(t, "ka", send(`"retry"`, "m-once", "procurement", `{"text":"pay"}`))
	if got := f.up.received(); len(got) != 1 {
		t.Fatalf("upstream received %v, want the message once", got)
	}
	if string(again["id"]) != `"retry"` || string(again["result"]) != string(first["result"]) {
		t.Fatalf("retry answered %s, want the first result with id \"retry\"", mustJSON(again))
	}
	// The retry reused the first's Idempotency-Key: the gate answered the
	// recorded verdict and recorded nothing more.
	if _, keys := f.gate.intercepted(t); len(keys) != 1 || !strings.HasPrefix(keys[0], "a2aproxy_") {
		t.Fatalf("recorded A2A requests %v, want one", keys)
	}
	// Another tenant's message with the same messageId is its own: decided
	// on its own boundary and forwarded.
	_, other := f.rpc(t, "kb", send("1", "m-once", "procurement", `{"text":"pay"}`))
	if _, ok := other["result"]; !ok || len(f.up.received()) != 2 {
		t.Fatalf("another tenant's message: %s, upstream %v", mustJSON(other), f.up.received())
	}
	if _, keys := f.gate.intercepted(t); len(keys) != 2 || keys[0] != keys[1] {
		t.Fatalf("recorded A2A requests %v, want one per tenant under the same key", keys)
	}
}

func TestProxy_EachTenantIsCheckedAgainstItsOwnBoundary(t *testing.T) {
	f := newFixture(t, nil)
	// org_c trusts no one: the agents org_a trusts are not trusted for it.
	status, m := f.rpc(t, "kc", send("1", "m-c", "procurement", `{"text":"hi"}`))
	e := errorOf(t, m)
	var v map[string]any
	_ = json.Unmarshal(e.Data, &v)
	if status != http.StatusOK || e.Code != CodeNotForwarded || v["status"] != "blocked" || v["engine_used"] != "trust_boundary" {
		t.Fatalf("org_c's message: %d %+v", status, e)
	}
	// A key the gate does not know is refused before anything is decided.
	r, _ := http.NewRequest(http.MethodPost, f.proxy.URL+"/a2a/proxy/treasury", strings.NewReader(send("1", "m-x", "procurement", `{"text":"hi"}`)))
	r.Header.Set("X-API-Key", "qwed_key_unknown")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if e := errorOf(t, out); resp.StatusCode != http.StatusUnauthorized || e.Code != CodeRefused || !strings.Contains(string(e.Data), "QWED-AUTH-002") {
		t.Fatalf("an unknown key: %d %+v", resp.StatusCode, e)
	}
	if got := f.up.received(); len(got) != 0 {
		t.Fatalf("the upstream received %v", got)
	}
}

func TestProxy_UpstreamDownIsAnErrorAndMayBeRetried(t *testing.T) {
	f := newFixture(t, nil)
	// The card is fetched while the upstream is up, then it stops.
	if _, m := f.rpc(t, "ka", send("1", "m-up", "procurement", `{"text":"hi"}`)); m["result"] == nil {
		t.Fatalf("first send: %s", mustJSON(m))
	}
	f.up.srv.Close()
	start := time.Now()
	status, m := f.rpc(t, "ka", send("2", "m-down", "procurement", `{"text":"hi"}`))
	e := errorOf(t, m)
	if status != http.StatusBadGateway || e.Code != CodeUpstream || !strings.Contains(string(e.Data), "QWED-SYS-002") {
		t.Fatalf("status %d error %+v", status, e)
	}
	if d := time.Since(start); d > DefaultTimeout {
		t.Fatalf("answered after %s", d)
	}
	// Nothing was delivered: the retry is forwarded again (and fails again).
	status, m = f.rpc(t, "ka", send("3", "m-down", "procurement", `{"text":"hi"}`))
	if e := errorOf(t, m); status != http.StatusBadGateway || strings.Contains(e.Message, "not forwarded again") {
		t.Fatalf("retry of an undelivered message: %d %+v", status, e)
	}
}

func TestProxy_SlowUpstreamTimesOutAndIsNeverSentTwice(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Timeout = 300 * time.Millisecond })
	f.up.hold = make(chan struct{})
	defer close(f.up.hold)
	start := time.Now()
	status, m := f.rpc(t, "ka", send("1", "m-slow", "procurement", `{"text":"hi"}`))
	e := errorOf(t, m)
	if status != http.StatusGatewayTimeout || e.Code != CodeUpstream || !strings.Contains(string(e.Data), "QWED-ENG-003") {
		t.Fatalf("status %d error %+v", status, e)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("answered after %s, the deadline is 300ms", d)
	}
	status, m = f.rpc(t, "ka", send("2", "m-slow", "procurement", `{"text":"hi"}`))
	if e := errorOf(t, m); status != http.StatusBadGateway || !strings.Contains(e.Message, "not forwarded again") {
		t.Fatalf("retry of a message whose outcome is unknown: %d %+v", status, e)
	}
	if got := f.up.received(); len(got) != 1 {
		t.Fatalf("upstream received %v, want the message once", got)
	}
}

func TestProxy_StreamIsRelayedEventByEvent(t *testing.T) {
	f := newFixture(t, nil)
	body := strings.Replace(send("5", "m-stream", "procurement", `{"text":"hi"}`), "SendMessage", "SendStreamingMessage", 1)
	r, _ := http.NewRequest(http.MethodPost, f.proxy.URL+"/a2a/proxy/treasury", strings.NewReader(body))
	r.Header.Set("X-API-Key", f.gate.keys["ka"])
	r.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q, body %s", ct, raw)
	}
	if n := strings.Count(string(raw), "data: "); n != 4 || !strings.Contains(string(raw), "echo: hi") {
		t.Fatalf("stream %q: want 4 events ending with the echo", raw)
	}
	// A stream is not replayed.
	status, m := f.rpc(t, "ka", body)
	if e := errorOf(t, m); status != http.StatusConflict || e.Code != CodeUpstream {
		t.Fatalf("retry of a stream: %d %+v", status, e)
	}
	if got := f.up.received(); len(got) != 1 {
		t.Fatalf("upstream received %v", got)
	}
}

// A caller that leaves a stream releases it: the forward to the upstream
// is cancelled at once, not held (a goroutine and an upstream connection)
// until StreamTimeout.
func TestProxy_StreamEndsWhenTheCallerLeaves(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.StreamTimeout = 10 * time.Minute })
	f.up.streamGone, f.up.streamEnd = make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(f.up.streamEnd) })
	body := strings.Replace(send("5", "m-leave", "procurement", `{"text":"hi"}`), "SendMessage", "SendStreamingMessage", 1)
	r, _ := http.NewRequest(http.MethodPost, f.proxy.URL+"/a2a/proxy/treasury", strings.NewReader(body))
	r.Header.Set("X-API-Key", f.gate.keys["ka"])
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, len("data: "))
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "data: " {
		t.Fatalf("first event %q: %v", first, err)
	}
	// Closing the body before its end closes the connection.
	resp.Body.Close()
	select {
	case <-f.up.streamGone:
	case <-time.After(30 * time.Second):
		t.Fatal("the upstream's stream is still open 30s after its caller left")
	}
}

func TestProxy_BadRequestsAreJSONRPCErrors(t *testing.T) {
	f := newFixture(t, nil)
	cases := []struct {
		name, body string
		code       int
	}{
		{"not JSON", `{"jsonrpc":`, CodeParseError},
		{"duplicate member", `{"jsonrpc":"2.0","id":1,"id":2,"method":"SendMessage","params":{}}`, CodeParseError},
		{"duplicate part member", send("1", "m", "s", `{"text":"a","text":"b"}`), CodeParseError},
		{"trailing value", send("1", "m", "s", `{"text":"a"}`) + `{}`, CodeParseError},
		{"batch", `[` + send("1", "m", "s", `{"text":"a"}`) + `]`, CodeInvalidRequest},
		{"notification", `{"jsonrpc":"2.0","method":"SendMessage","params":{}}`, CodeInvalidRequest},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"SendMessage","params":{}}`, CodeInvalidRequest},
		{"version", `{"jsonrpc":"1.0","id":1,"method":"SendMessage","params":{}}`, CodeInvalidRequest},
		{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{},"x":1}`, CodeInvalidRequest},
		{"tasks/get", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}}`, CodeUnsupportedOperation},
		{"GetTask", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`, CodeUnsupportedOperation},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"Nope","params":{}}`, CodeMethodNotFound},
		{"no sender", strings.Replace(send("1", "m", "s", `{"text":"a"}`), `"metadata":{"sender_agent_id":"s"}`, `"metadata":{}`, 1), CodeInvalidParams},
		{"no parts", send("1", "m", "s"), CodeInvalidParams},
		{"no messageId", strings.Replace(send("1", "m", "s", `{"text":"a"}`), `"messageId":"m",`, "", 1), CodeInvalidParams},
		{"two contents", send("1", "m", "s", `{"text":"a","data":{}}`), CodeInvalidParams},
		{"null text", send("1", "m", "s", `{"text":null}`), CodeInvalidParams},
		{"declared text", send("1", "m", "s", `{"text":"a","metadata":{"payload_type":"code_execution"}}`), CodeInvalidParams},
		{"kind mismatch", send("1", "m", "s", `{"kind":"data","text":"a"}`), CodeInvalidParams},
		{"file part", send("1", "m", "s", `{"url":"https://example.com/x.py"}`), CodeContentTypeNotSupported},
		{"raw part", send("1", "m", "s", `{"raw":"ZXZhbCgxKQ=="}`), CodeContentTypeNotSupported},
		{"v0.3 file part", send("1", "m", "s", `{"kind":"file","file":{"uri":"https://example.com"}}`), CodeContentTypeNotSupported},
		{"too many parts", send("1", "m", "s", strings.Repeat(`{"text":"a"},`, MaxParts)+`{"text":"a"}`), CodeInvalidParams},
		{"deep", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + strings.Repeat(`[`, MaxDepth) + strings.Repeat(`]`, MaxDepth) + `}`, CodeParseError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, m := f.rpc(t, "ka", c.body)
			if e := errorOf(t, m); e.Code != c.code {
				t.Fatalf("code %d (%s), want %d", e.Code, e.Message, c.code)
			}
		})
	}
	if msgs, _ := f.gate.intercepted(t); len(msgs) != 0 {
		t.Fatalf("%d bad requests reached the gate", len(msgs))
	}
	if got := f.up.received(); len(got) != 0 {
		t.Fatalf("bad requests reached the upstream: %v", got)
	}
}

func TestProxy_A2A03MessageIsInterceptedPartByPart(t *testing.T) {
	f := newFixture(t, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-03","role":"user","metadata":{"sender_agent_id":"procurement"},` +
		`"parts":[{"kind":"text","text":"hi"},{"kind":"data","data":{"q":"SELECT 1"},"metadata":{"payload_type":"data_query"}},{"kind":"data","data":[1,2]}]}}}`
	if _, m := f.rpc(t, "ka", body); m["result"] == nil {
		t.Fatalf("answer %s", mustJSON(m))
	}
	got, _ := f.gate.intercepted(t)
	want := []string{`general {"text":"hi"}`, `data_query {"q":"SELECT 1"}`, `general {"value":[1,2]}`}
	if len(got) != len(want) {
		t.Fatalf("intercepted %s", mustJSON(got))
	}
	for i, m := range got {
		if s := string(m.PayloadType) + " " + string(m.Payload); s != want[i] {
			t.Errorf("part %d intercepted as %s, want %s", i, s, want[i])
		}
	}
}

func TestProxy_BoundsAndUnknownPaths(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxBodyBytes = 1 << 10 })
	status, m := f.rpc(t, "ka", send("1", "m", "s", `{"text":"`+strings.Repeat("a", 2<<10)+`"}`))
	if e := errorOf(t, m); status != http.StatusRequestEntityTooLarge || e.Code != CodeInvalidRequest {
		t.Fatalf("over the body limit: %d %+v", status, e)
	}
	for _, c := range []struct{ method, path string }{
		{"POST", "/a2a/proxy/nobody"}, {"GET", "/a2a/proxy/treasury/other"}, {"GET", "/a2a/proxy/treasury"},
	} {
		r, _ := http.NewRequest(c.method, f.proxy.URL+c.path, nil)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: status %d", c.method, c.path, resp.StatusCode)
		}
	}
}

func TestParseUpstream(t *testing.T) {
	for _, bad := range []string{"", "x", "=http://a", "a b=http://a", "a=ftp://h", "a=http://", "a=http://u:p@h", "a=http://h/?q=1", "a=http://h/#f", "../x=http://h"} {
		if _, err := ParseUpstream(bad); err == nil {
			t.Errorf("ParseUpstream(%q) accepted", bad)
		}
	}
	u, err := ParseUpstream("treasury=http://127.0.0.1:9/agents/t")
	if err != nil || u.Name != "treasury" || u.URL.String() != "http://127.0.0.1:9/agents/t/" {
		t.Fatalf("ParseUpstream: %+v %v", u, err)
	}
}

func TestProxy_CardIsCachedForItsTTLAndKeptWhenARefreshFails(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	f := newFixture(t, func(c *Config) { c.Clock = clock })
	get := func() int {
		resp, err := http.Get(f.proxy.URL + "/a2a/proxy/treasury/" + CardPath)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	fetches := func() int { f.up.mu.Lock(); defer f.up.mu.Unlock(); return f.up.cards }
	for range 3 {
		if s := get(); s != http.StatusOK {
			t.Fatalf("status %d", s)
		}
	}
	if n := fetches(); n != 1 {
		t.Fatalf("%d fetches within the TTL, want 1", n)
	}
	advance(DefaultCardTTL)
	f.up.srv.Close()
	if s := get(); s != http.StatusOK {
		t.Fatalf("a failed refresh: status %d, want the last card", s)
	}
}

// An agent's Bearer token sends only as that agent: a message whose
// metadata names another sender is refused by the endpoint (here the named
// sender is no agent the token opens: QWED-AGENT-001), never decided on
// its behalf.
func TestProxy_AnAgentTokenSendsOnlyAsItsAgent(t *testing.T) {
	f := newFixture(t, nil)
	ev := f.gate.g.Submit(t, gatetest.Register("proxy-agent", 2))
	if ev.AgentID == "" {
		t.Fatalf("registration: %+v", ev)
	}
	post := func(sender string) (int, rpcErr) {
		r, _ := http.NewRequest(http.MethodPost, f.proxy.URL+"/a2a/proxy/treasury", strings.NewReader(send("1", "m-"+sender, sender, `{"text":"hi"}`)))
		r.Header.Set("Authorization", "Bearer "+gatetest.Token)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, errorOf(t, m)
	}
	if status, e := post("procurement"); status < 400 || status >= 500 || e.Code != CodeRefused || !strings.Contains(string(e.Data), `"code":"QWED-`) {
		t.Fatalf("a token sending as another agent: %d %+v", status, e)
	}
	// As itself, the message is decided on its principal's boundary
	// (org_1 trusts no one: blocked, and recorded).
	if status, e := post(ev.AgentID); status != http.StatusOK || e.Code != CodeNotForwarded || !strings.Contains(string(e.Data), `"engine_used":"trust_boundary"`) {
		t.Fatalf("a token sending as its agent: %d %+v", status, e)
	}
	if got := f.up.received(); len(got) != 0 {
		t.Fatalf("the upstream received %v", got)
	}
}
