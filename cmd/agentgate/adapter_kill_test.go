package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/adapter/adaptertest"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// TestAdapterKill9 (issue 14): a real `agentgate serve` is killed with
// SIGKILL while its call to the business is in flight (the execute is in
// the log, its outcome is not); restarted on the same data dir, it calls
// the business again with the same Idempotency-Key and the same decision
// token (verified with the gate's JWKS over HTTP), records exactly one
// outcome, and the execute's transaction reads completed; replay --verify
// re-decides it all.
func TestAdapterKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	biz := adaptertest.New(t)
	biz.Hold = adaptertest.HoldFirst // the gate dies with the first call in flight
	srv := startServer(t, bin, data)
	base := "http://" + srv.addr
	client := &http.Client{Timeout: 30 * time.Second}
	ctx := context.Background()
	admin := map[string]string{"X-API-Key": "admin-key"}

	status, reg, err := call(ctx, client, "POST", base+"/agents/register", admin, map[string]any{
		"agent": map[string]any{"name": "buyer", "type": "autonomous", "principal_id": "org_k9"}, "permissions": map[string]any{}, "budget": map[string]any{},
	})
	if err != nil || status != 201 {
		t.Fatalf("register: %d %v %v", status, reg, err)
	}
	agent, token := reg["agent_id"].(string), reg["agent_token"].(string)
	status, out, err := call(ctx, client, "POST", base+"/businesses", admin, map[string]any{
		"id": "shop", "name": "Shop", "categories": []string{"books"}, "endpoint": biz.URL + "/agp", "currency": "USD",
	})
	if err != nil || status != 201 && status != 200 {
		t.Fatalf("business: %d %v %v", status, out, err)
	}
	agentHdr := map[string]string{"Authorization": "Bearer " + token, "X-Agent-ID": agent, "Idempotency-Key": "exec-1"}
	execBody := map[string]any{"businessId": "shop", "request": map[string]any{"sku": "book-42", "amount_cents": 1250}}
	go func() {
		// Its answer never comes: the gate dies first.
		_, _, _ = call(ctx, &http.Client{Timeout: time.Minute}, "POST", base+"/agp/execute", agentHdr, execBody)
	}()
	var key string
	select {
	case key = <-biz.Entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the business was never called")
	}
	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = srv.cmd.Process.Wait()

	srv = startServer(t, bin, data)
	base = "http://" + srv.addr
	// The execute retried with its Idempotency-Key gets the recorded
	// decision and, once the business answered the second call, its
	// outcome.
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, out, err = call(ctx, client, "POST", base+"/agp/execute", agentHdr, execBody)
		if err == nil && status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("execute after the restart: %d %v %v", status, out, err)
		}
	}
	if out["transactionId"] != key || out["status"] != "completed" {
		t.Fatalf("execute answered %v, want transaction %s completed", out, key)
	}
	calls := biz.Calls(key)
	if len(calls) != 2 || calls[0].Decision != calls[1].Decision || calls[0].Body != calls[1].Body {
		t.Fatalf("the business saw %+v", calls)
	}
	resp, err := client.Get(base + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	set, err := attest.ParseJWKS(jwks)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := set.VerifyExecute(calls[0].Decision, time.Now())
	if err != nil {
		t.Fatalf("the decision does not verify with the gate's JWKS: %v", err)
	}
	hash, err := domain.RequestHashOf([]byte(calls[0].Body))
	if err != nil {
		t.Fatal(err)
	}
	if claims.Subject != key || claims.Audience != "shop" || claims.Execute.Consumer != "org_k9" || claims.Execute.AgentID != agent ||
		claims.Execute.AmountCents != 1250 || claims.Execute.RequestHash != hash {
		t.Fatalf("claims %+v (body hash %s)", claims, hash)
	}
	cliStop(t, srv.cmd)

	lg, err := pebblelog.Open(filepath.Join(data, "log"), pebblelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := 0
	for _, ev := range gatetest.LogEvents(t, lg) {
		if ev.Type == domain.EvExecuteCompleted && ev.Transaction.ID == key {
			outcomes++
			if ev.Transaction.Status != domain.TxCompleted {
				t.Fatalf("outcome %+v", ev.Transaction)
			}
		}
	}
	_ = lg.Close()
	if outcomes != 1 {
		t.Fatalf("%d outcomes recorded for %s, want 1", outcomes, key)
	}
	if out, code := cliRun(t, bin, "replay", "--data", data, "--verify"); code != 0 {
		t.Fatalf("replay --verify: exit %d\n%s", code, out)
	}
}
