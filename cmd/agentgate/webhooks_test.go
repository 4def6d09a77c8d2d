package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/notify"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// TestServeWebhooks runs the real binary: a consumer registers a webhook
// over HTTP; a notice raised while the gate is down (its event appended
// to the log) is delivered once the gate is back, signed so that the
// receiver verifies the body with the JWKS it fetches from the gate; the
// delivery reads as delivered over HTTP.
func TestServeWebhooks(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	type post struct {
		body []byte
		sig  string
	}
	posts := make(chan post, 8)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		posts <- post{body: b, sig: r.Header.Get(notify.SignatureHeader)}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	args := []string{"--data", data, "--http", "127.0.0.1:0", "--api-key", "admin-key", "--webhook-allow-private"}
	cmd, _, addr := cliServe(t, bin, args, nil)
	ctx := context.Background()
	client := &http.Client{Timeout: 10 * time.Second}
	base := "http://" + addr
	st, key, err := call(ctx, client, "POST", base+"/principals/org_a/keys", map[string]string{"X-API-Key": "admin-key"}, nil)
	if err != nil || st != 201 {
		t.Fatalf("issuing a key: %d %v", st, err)
	}
	apiKey := map[string]string{"X-API-Key": key["api_key"].(string)}
	st, hook, err := call(ctx, client, "POST", base+"/webhooks", apiKey, map[string]any{"url": rc.URL + "/hook", "events": []string{"blocked"}})
	if err != nil || st != 201 {
		t.Fatalf("creating a webhook: %d %v %v", st, hook, err)
	}
	cliStop(t, cmd)

	lg, err := pebblelog.Open(filepath.Join(data, "log"), pebblelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	seq := gatetest.AppendNotices(t, lg, 0, "org_a", "tx_1", domain.NoticeBlocked, domain.NoticeQueued)
	if err := lg.Close(); err != nil {
		t.Fatal(err)
	}
	cmd, out, addr := cliServe(t, bin, args, nil)
	base = "http://" + addr
	var got post
	select {
	case got = <-posts:
	case <-time.After(20 * time.Second):
		t.Fatalf("no webhook POST:\n%s", out.String())
	}
	doc, err := attest.FetchJWKS(ctx, base+"/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	set, err := attest.ParseJWKS(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.VerifyWebhook(got.sig, got.body); err != nil {
		t.Fatalf("the receiver cannot verify %s: %v", got.body, err)
	}
	id := domain.DeliveryID(0, seq, 0, hook["id"].(string))
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, page, err := call(ctx, client, "GET", base+"/webhooks/deliveries?status=delivered", apiKey, nil)
		if err != nil || st != 200 {
			t.Fatalf("reading deliveries: %d %v", st, err)
		}
		if ds, _ := page["deliveries"].([]any); len(ds) == 1 && ds[0].(map[string]any)["delivery_id"] == id {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %s not delivered: %v", id, page)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Only the blocked notice matched the webhook's filter.
	select {
	case p := <-posts:
		t.Fatalf("a second POST: %s", p.body)
	default:
	}
	cliStop(t, cmd)
}
