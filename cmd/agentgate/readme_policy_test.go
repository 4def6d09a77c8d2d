package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReadmeConsumerPolicyTour runs the README's consumer policy tour as
// written, its folders replaced by fresh ones and its addresses by the
// free ports the business and the gate bind themselves (port 0, read back
// from the line each prints):
// `bin/agentgate dev-business`, `bin/agentgate serve --execute-policy
// strict`, then the tour's curl and jq calls from the repository root,
// each step showing what its comment promises: the business registered,
// the policies created, an execute answered with the business's outcome,
// each refusal of the Agent Policy Engine spec §2.4 verbatim, a spending
// policy's block, and a confirmation approved and executed.
func TestReadmeConsumerPolicyTour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	root, _ := filepath.Abs("../..")
	bizAddr, gateAddr := "127.0.0.1:0", "127.0.0.1:0"
	fix := func(s string) string {
		s = strings.ReplaceAll(s, "127.0.0.1:9090", bizAddr)
		s = strings.ReplaceAll(s, "127.0.0.1:8082", gateAddr)
		s = strings.ReplaceAll(s, "./data-policy", filepath.Join(t.TempDir(), "data"))
		return strings.ReplaceAll(s, "bin/agentgate", bin)
	}
	logs := &syncBuffer{}
	for _, c := range []struct {
		what, after string
		addr        *string
	}{
		{"the business", "Start the business in one terminal", &bizAddr},
		{"the gate", "Then the gate in a second one", &gateAddr},
	} {
		out := startReadmeProcess(t, c.what, fix(readmeBlock(t, c.after, nil)), root, logs)
		*c.addr = announcedAddr(t, out, c.what, time.Minute)
	}
	script := fix(readmeBlock(t, "Then the tour in a third one", nil))
	out, _ := runScript(t, "the README's consumer policy tour", script, 2*time.Minute, logs, root)
	for _, step := range []struct{ what, pattern string }{
		{"1. the business is registered", `(?m)^\{"id":"coffee","name":"Coffee Shop","categories":\["food"\],"endpoint":"http://[^"]+/orders","currency":"USD","owner":"org_home"\}$`},
		{"2. the daily limit is version 1", `(?m)^\{"op":"create","id":"daily-10","version":1\}$`},
		{"2. the time window", `(?m)^\{"op":"create","id":"hours"\}$`},
		{"3. the business's outcome", `(?m)^\{"transactionId":"tx_[0-9a-f]+","status":"completed","data":\{"order_id":"tx_[0-9a-f]+","received":\{"item":"latte","amount_cents":450\}\}\}$`},
		{"4. no token", `(?m)^\{"code":"QWED-EXEC-001","message":"Execute confirmation required. Provide x-confirmation-token header."\}$`},
		{"4. single use", `(?m)^\{"code":"QWED-EXEC-002","message":"Invalid confirmation token."\}$`},
		{"4. another request", `(?m)^\{"code":"QWED-EXEC-004","message":"Confirmation token does not match this execute request."\}$`},
		{"4. unparseable", `(?m)^\{"code":"QWED-EXEC-006","message":"Unable to validate confirmation token for execute payload."\}$`},
		{"4. over the ceiling", `(?m)^\{"code":"QWED-EXEC-005","message":"Execute amount exceeds policy limit \(2000 cents\)."\}$`},
		{"5. the daily limit blocks", `(?m)^\{"code":"QWED-POLICY-001","message":"[^"]*daily-10[^"]*"\}$`},
		{"6. pending approval", `(?m)^\{"transactionId":"tx_[0-9a-f]+","status":"pending_approval","approvalId":"[^"]+"\}$`},
		{"6. executed once approved", `(?m)^\{"status":"completed","amount_cents":520\}$`},
	} {
		if !regexp.MustCompile(step.pattern).MatchString(out) {
			t.Errorf("step %s: no match for %s in\n%s", step.what, step.pattern, out)
		}
	}
}
