package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// FuzzExecuteBodies posts fuzzed bodies to the consumer policy engine's
// write endpoints of a real gate (Pebble log, worker, adapter, a local
// business) in confirm mode: every answer is JSON, a refusal is a
// catalogue error with a 4xx status (never a 5xx, never a panic), and a
// refused execute never reaches the business.
func FuzzExecuteBodies(f *testing.F) {
	for _, s := range []string{
		execBody("shop", 50, ""), `{"businessId":"shop","request":{"amount":"1.25"}}`, `{"businessId":"shop","request":[]}`,
		`{"businessId":"nope","request":{}}`, `{"businessId":"shop","request":{"amount":1e400}}`, `{"businessId":"shop","request":{"amount":-1}}`,
		`{"businessId":"shop","request":{"amount_cents":"NaN"}}`, `{"businessId":"shop","request":{},"BUSINESSID":"x"}`,
		`{"id":"b1","name":"B","categories":["x"],"endpoint":"http://127.0.0.1:1/","currency":"EUR"}`,
		`{"id":"p","type":"spending","spending":{"daily_cents":5}}`,
		`{"id":"w","type":"time_window","time_window":{"time_zone":"Mars/Base","windows":[{"days":["mon"],"start":"09:00","end":"08:00"}]}}`,
		`{`, `null`, ``, `"x"`,
	} {
		for ep := range 4 {
			f.Add(uint8(ep), s)
		}
	}
	g := newExecGate(f, domain.ExecuteModeConfirm, 100)
	paths := []string{"/agp/execute/prepare", "/agp/execute", "/businesses", "/policies"}
	f.Fuzz(func(t *testing.T, ep uint8, body string) {
		path := paths[int(ep)%len(paths)]
		h := agentH(g.agent)
		if path == "/businesses" || path == "/policies" {
			h = apiKey(g.key)
		}
		calls, _ := g.biz.total()
		r := fuzzPost(t, g.testGate, path, h, body)
		if !json.Valid(r.body) {
			t.Fatalf("POST %s %q: %d, not JSON: %s", path, body, r.status, r.body)
		}
		if r.status >= 500 {
			t.Fatalf("POST %s %q: %d %s", path, body, r.status, r.body)
		}
		if r.status >= 400 {
			if e := errorOf(t, r.body); !e.Code.Known() {
				t.Fatalf("POST %s %q: unknown code %s", path, body, e.Code)
			}
			if after, _ := g.biz.total(); path == "/agp/execute" && after != calls {
				t.Fatalf("POST %s %q refused (%d) but the business was called", path, body, r.status)
			}
		}
		if path == "/agp/execute" && r.status == http.StatusOK {
			t.Fatalf("an execute without a confirmation token passed in confirm mode: %s", r.body)
		}
	})
}

// fuzzPost posts body to path of g's server on behalf of t (a fuzz
// target's own test: the gate's t is the fuzz's f, whose helpers must not
// run inside the target).
func fuzzPost(t *testing.T, g *testGate, path string, h hdr, body string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading POST %s: %v", path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}
