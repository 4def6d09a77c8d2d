package a2aproxy

import (
	"bytes"
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

// gateAPI stands for the gate's HTTP API in these tests of the proxy's
// own mechanics: POST /a2a/intercept answers a verdict, blocking a
// financial payload whose claimed_total is 999.99 and refusing a request
// without an API key. It records the AgentMessages it was given. The
// whole path through the real gate is tested in cmd/agentgate.
type gateAPI struct {
	mu   sync.Mutex
	msgs []a2a.Message
	keys []string
}

func (g *gateAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != InterceptPath {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("X-Api-Key") == "" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"code":"QWED-AUTH-001","message":"X-API-Key is required","details":{}}}`)
		return
	}
	var m a2a.Message
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	g.msgs = append(g.msgs, m)
	g.keys = append(g.keys, r.Header.Get("Idempotency-Key"))
	g.mu.Unlock()
	status, engine, reason := a2a.StatusForwarded, a2a.EnginePassthrough, "general payload forwarded"
	if m.PayloadType == a2a.PayloadFinancial {
		engine, reason = a2a.EngineFinance, "totals match"
		if bytes.Contains(m.Payload, []byte("999.99")) {
			status, reason = a2a.StatusBlocked, "Mathematical hallucination detected: claimed_total=999.99, computed_total=150.00"
		}
	}
	fmt.Fprintf(w, `{"status":%q,"reason":%q,"engine_used":%q,"attestation_jwt":"eyJ.test.sig","trace_id":"a2a_test","verified_at":"2026-03-02T10:00:00Z","details":{}}`, status, reason, engine)
}

func (g *gateAPI) messages() []a2a.Message {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]a2a.Message(nil), g.msgs...)
}

type fixture struct {
	up    *upstreamAgent
	gate  *gateAPI
	proxy *httptest.Server
}

func newFixture(t *testing.T, mod func(*Config)) *fixture {
	t.Helper()
	f := &fixture{up: newUpstream(t), gate: &gateAPI{}}
	u, err := ParseUpstream("treasury=" + f.up.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Upstreams: []Upstream{u}, Interceptor: InProcess(f.gate), Logger: slog.New(slog.DiscardHandler)}
	if mod != nil {
		mod(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.proxy = httptest.NewServer(Wrap(p, f.gate))
	t.Cleanup(f.proxy.Close)
	return f
}

// rpc posts body to the proxied agent with an API key and returns the
// HTTP status and the decoded answer.
func (f *fixture) rpc(t *testing.T, key, body string) (int, map[string]json.RawMessage) {
	t.Helper()
	r, _ := http.NewRequest(http.MethodPost, f.proxy.URL+"/a2a/proxy/treasury", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if key != "" {
		r.Header.Set("X-API-Key", key)
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
	status, m := f.rpc(t, "k1", send("1", "m-ssrf", "procurement", `{"text":"hi"}`))
	if e := errorOf(t, m); status != http.StatusBadGateway || e.Code != CodeUpstream {
		t.Fatalf("send with a card on another origin: %d %+v", status, e)
	}
	if got := other.received(); len(got) != 0 {
		t.Fatalf("the other origin was sent %v", got)
	}
}

func TestProxy_TextIsInterceptedThenForwardedAndAnsweredAsIs(t *testing.T) {
	f := newFixture(t, nil)
	status, m := f.rpc(t, "k1", send(`"r1"`, "m-1", "procurement", `{"text":"Hello"}`))
	if status != http.StatusOK || string(m["id"]) != `"r1"` {
		t.Fatalf("status %d, answer %s", status, mustJSON(m))
	}
	if got := string(m["result"]); !strings.Contains(got, `"echo: Hello"`) {
		t.Fatalf("result %s, want the upstream's echo", got)
	}
	msgs := f.gate.messages()
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
	status, m := f.rpc(t, "k1", send("7", "m-bad", "procurement", `{"text":"invoice"}`, financeBad))
	e := errorOf(t, m)
	if status != http.StatusOK || e.Code != CodeNotForwarded || string(m["id"]) != "7" {
		t.Fatalf("status %d error %+v", status, e)
	}
	var v map[string]any
	if err := json.Unmarshal(e.Data, &v); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"status": "blocked", "engine_used": "finance_guard", "attestation_jwt": "eyJ.test.sig", "trace_id": "a2a_test"} {
		if v[k] != want {
			t.Errorf("data.%s = %v, want %v", k, v[k], want)
		}
	}
	if !strings.Contains(e.Message, "part 1") {
		t.Errorf("message %q does not name the part", e.Message)
	}
	msgs := f.gate.messages()
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
	if status != http.StatusUnauthorized || e.Code != CodeRefused || !strings.Contains(string(e.Data), "QWED-AUTH-001") {
		t.Fatalf("status %d error %+v", status, e)
	}
	if got := f.up.received(); len(got) != 0 {
		t.Fatalf("a refused message reached the upstream: %v", got)
	}
}

func TestProxy_RetryIsAnsweredFromMemoryNotForwardedTwice(t *testing.T) {
	f := newFixture(t, nil)
	_, first := f.rpc(t, "k1", send("1", "m-once", "procurement", `{"text":"pay"}`))
	_, again := f.rpc(t, "k1", send(`"retry"`, "m-once", "procurement", `{"text":"pay"}`))
	if got := f.up.received(); len(got) != 1 {
		t.Fatalf("upstream received %v, want the message once", got)
	}
	if string(again["id"]) != `"retry"` || string(again["result"]) != string(first["result"]) {
		t.Fatalf("retry answered %s, want the first result with id \"retry\"", mustJSON(again))
	}
	keys := f.gate.keys
	if len(keys) != 2 || keys[0] != keys[1] || !strings.HasPrefix(keys[0], "a2aproxy_") {
		t.Fatalf("idempotency keys %v: a retry must reuse the first's", keys)
	}
	// Another tenant's message with the same messageId is its own.
	_, other := f.rpc(t, "k2", send("1", "m-once", "procurement", `{"text":"pay"}`))
	if _, ok := other["result"]; !ok || len(f.up.received()) != 2 {
		t.Fatalf("another tenant's message: %s, upstream %v", mustJSON(other), f.up.received())
	}
}

func TestProxy_UpstreamDownIsAnErrorAndMayBeRetried(t *testing.T) {
	f := newFixture(t, nil)
	// The card is fetched while the upstream is up, then it stops.
	if _, m := f.rpc(t, "k1", send("1", "m-up", "procurement", `{"text":"hi"}`)); m["result"] == nil {
		t.Fatalf("first send: %s", mustJSON(m))
	}
	f.up.srv.Close()
	start := time.Now()
	status, m := f.rpc(t, "k1", send("2", "m-down", "procurement", `{"text":"hi"}`))
	e := errorOf(t, m)
	if status != http.StatusBadGateway || e.Code != CodeUpstream || !strings.Contains(string(e.Data), "QWED-SYS-002") {
		t.Fatalf("status %d error %+v", status, e)
	}
	if d := time.Since(start); d > DefaultTimeout {
		t.Fatalf("answered after %s", d)
	}
	// Nothing was delivered: the retry is forwarded again (and fails again).
	status, m = f.rpc(t, "k1", send("3", "m-down", "procurement", `{"text":"hi"}`))
	if e := errorOf(t, m); status != http.StatusBadGateway || strings.Contains(e.Message, "not forwarded again") {
		t.Fatalf("retry of an undelivered message: %d %+v", status, e)
	}
}

func TestProxy_SlowUpstreamTimesOutAndIsNeverSentTwice(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Timeout = 300 * time.Millisecond })
	f.up.hold = make(chan struct{})
	defer close(f.up.hold)
	start := time.Now()
	status, m := f.rpc(t, "k1", send("1", "m-slow", "procurement", `{"text":"hi"}`))
	e := errorOf(t, m)
	if status != http.StatusGatewayTimeout || e.Code != CodeUpstream || !strings.Contains(string(e.Data), "QWED-ENG-003") {
		t.Fatalf("status %d error %+v", status, e)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("answered after %s, the deadline is 300ms", d)
	}
	status, m = f.rpc(t, "k1", send("2", "m-slow", "procurement", `{"text":"hi"}`))
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
	r.Header.Set("X-API-Key", "k1")
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
	status, m := f.rpc(t, "k1", body)
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
	r.Header.Set("X-API-Key", "k1")
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
			_, m := f.rpc(t, "k1", c.body)
			if e := errorOf(t, m); e.Code != c.code {
				t.Fatalf("code %d (%s), want %d", e.Code, e.Message, c.code)
			}
		})
	}
	if n := len(f.gate.messages()); n != 0 {
		t.Fatalf("%d bad requests reached the interceptor", n)
	}
	if got := f.up.received(); len(got) != 0 {
		t.Fatalf("bad requests reached the upstream: %v", got)
	}
}

func TestProxy_A2A03MessageIsInterceptedPartByPart(t *testing.T) {
	f := newFixture(t, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-03","role":"user","metadata":{"sender_agent_id":"procurement"},` +
		`"parts":[{"kind":"text","text":"hi"},{"kind":"data","data":{"q":"SELECT 1"},"metadata":{"payload_type":"data_query"}},{"kind":"data","data":[1,2]}]}}}`
	if _, m := f.rpc(t, "k1", body); m["result"] == nil {
		t.Fatalf("answer %s", mustJSON(m))
	}
	got := f.gate.messages()
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
	status, m := f.rpc(t, "k1", send("1", "m", "s", `{"text":"`+strings.Repeat("a", 2<<10)+`"}`))
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
