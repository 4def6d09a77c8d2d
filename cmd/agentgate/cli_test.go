package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// cliServe starts `agentgate serve` with args and env, reads the address
// it announces (give it --http 127.0.0.1:0: the gate binds a free port
// itself, so no other process can take the port between a test's pick and
// the gate's bind), waits for health there and returns the process, its
// combined output and that address.
func cliServe(t *testing.T, bin string, args, env []string) (*exec.Cmd, *syncBuffer, string) {
	t.Helper()
	cmd, out := cliStart(t, bin, args, env)
	addr := announcedAddr(t, out, "serve", 20*time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return cmd, out, addr
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("serve %v did not become healthy on %s:\n%s", args, addr, out.String())
	return nil, nil, ""
}

// listeningLine is the line serve prints once it has bound its HTTP
// address (rateFlags.announce), and dev-kafka's and dev-business's.
var listeningLine = regexp.MustCompile(`(?m)^(?:agentgate|dev-kafka|dev-business) listening on (?:https?://)?(\S+)`)

// announcedAddr waits until out holds what's "listening on" line and
// returns the address it names; it fails t after timeout.
func announcedAddr(t *testing.T, out fmt.Stringer, what string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if m := listeningLine.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not say where it listens in %v:\n%s", what, timeout, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cliStart starts `agentgate serve args` with env added to the test's,
// its output in the buffer; the process is killed at the end of the test.
func cliStart(t *testing.T, bin string, args, env []string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	return cmd, out
}

// cliStop sends SIGTERM and expects exit 0.
func cliStop(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("SIGTERM: exit %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("SIGTERM: the gate did not stop")
	}
}

// cliRun runs the binary and returns its output and exit code.
func cliRun(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return string(out), 0
}

// TestServeAnnouncesTheAddressItBound: `serve --http 127.0.0.1:0` binds a
// free port itself and prints it on stdout ("agentgate listening on
// http://HOST:PORT", the address its log line names too) and answers
// there; on an address in use it exits non-zero with the reason and
// prints no such line. The tests start their gates so, so that no other
// process can take a port between the test's pick and the gate's bind.
func TestServeAnnouncesTheAddressItBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	cmd, out, addr := cliServe(t, bin, []string{"--data", t.TempDir(), "--http", "127.0.0.1:0", "--api-key", "admin-key"}, nil)
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "0" {
		t.Fatalf("serve announced %q, want the port it bound:\n%s", addr, out)
	}
	if !strings.Contains(out.String(), `msg="agentgate serving" http=`+addr+" ") {
		t.Fatalf("the log line does not name the bound address %s:\n%s", addr, out)
	}
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	taken := held.Addr().String()
	o, code := cliRun(t, bin, "serve", "--data", t.TempDir(), "--http", taken, "--api-key", "admin-key")
	if code == 0 || !strings.Contains(o, "listening on "+taken+": ") || !strings.Contains(o, "address already in use") ||
		strings.Contains(o, "agentgate listening on") {
		t.Fatalf("serve on a taken address %s: exit %d, want a refusal naming it and no announcement:\n%s", taken, code, o)
	}
	cliStop(t, cmd)
}

// TestCLIServeMintsAdminKeyOnce: without --api-key the first start mints
// an admin key, prints it once and stores only its hash; a restart prints
// nothing and the key still works. The listen address comes from
// AGENTGATE_HTTP (every flag reads its AGENTGATE_ variable).
func TestCLIServeMintsAdminKeyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	env := []string{"AGENTGATE_HTTP=127.0.0.1:0", "AGENTGATE_DATA=" + data}
	srv, out, addr := cliServe(t, bin, nil, env)
	if addr == "127.0.0.1:8080" {
		t.Fatalf("serve listens on its default %s: AGENTGATE_HTTP was not read", addr)
	}
	m := regexp.MustCompile(`admin API key \(shown once[^)]*\): (qwed_admin_\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no admin key printed:\n%s", out.String())
	}
	key := m[1]
	issue := func() int {
		st, _, err := call(context.Background(), http.DefaultClient, "POST", "http://"+addr+"/principals/org_cli/keys", map[string]string{"X-API-Key": key}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := issue(); st != 201 {
		t.Fatalf("the printed admin key issues keys: got %d", st)
	}
	cliStop(t, srv)
	stored, err := os.ReadFile(filepath.Join(data, "admin_key.sha256"))
	if err != nil || strings.Contains(string(stored), key) {
		t.Fatalf("the data dir must hold the key's hash only: %q %v", stored, err)
	}
	srv, out, addr = cliServe(t, bin, nil, env)
	if strings.Contains(out.String(), "qwed_admin_") {
		t.Fatalf("a restart printed an admin key again:\n%s", out.String())
	}
	if st := issue(); st != 201 {
		t.Fatalf("the admin key survives a restart: got %d", st)
	}
	cliStop(t, srv)
}

// TestCLIKeysCreateAndVerifyAttestation: `keys create` issues a principal
// key offline that scopes the HTTP API to that principal; an attestation
// verifies with `verify-attestation` against the JWKS as a file and as a
// URL (exit 0, VALID) and a tampered one does not (exit 1, INVALID); after
// `keys rotate-signing` the old token still verifies.
func TestCLIKeysCreateAndVerifyAttestation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	out, code := cliRun(t, bin, "keys", "create", "--data", data, "--principal", "org_cli")
	m := regexp.MustCompile(`principal org_cli key \S+ \(shown once\): (qwed_key_\S+)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("keys create: exit %d\n%s", code, out)
	}
	key := m[1]
	if _, code := cliRun(t, bin, "keys", "create", "--data", data); code == 0 {
		t.Fatal("keys create without --principal must fail")
	}

	srv, _, addr := cliServe(t, bin, []string{"--data", data, "--http", "127.0.0.1:0", "--api-key", "admin-key"}, nil)
	base := "http://" + addr
	ctx := context.Background()
	reg := func(principal string) (int, map[string]any) {
		st, body, err := call(ctx, http.DefaultClient, "POST", base+"/agents/register", map[string]string{"X-API-Key": key},
			map[string]any{"agent": map[string]any{"name": "a", "type": "supervised", "principal_id": principal}})
		if err != nil {
			t.Fatal(err)
		}
		return st, body
	}
	if st, body := reg("org_other"); st != 403 {
		t.Fatalf("a principal key registers for another principal: %d %v", st, body)
	}
	st, agent := reg("org_cli")
	if st != 201 {
		t.Fatalf("register: %d %v", st, agent)
	}
	st, dec, err := call(ctx, http.DefaultClient, "POST", base+"/agents/"+agent["agent_id"].(string)+"/verify",
		map[string]string{"Authorization": "Bearer " + agent["agent_token"].(string)}, map[string]any{
			"action":  map[string]any{"type": "calculate", "query": "6*7=42"},
			"context": map[string]any{"conversation_id": "c", "step_number": 1},
			"options": map[string]any{"require_attestation": true}})
	token, _ := dec["attestation"].(string)
	if err != nil || st != 200 || token == "" {
		t.Fatalf("verify: %d %v %v", st, dec, err)
	}
	jwksFile := filepath.Join(t.TempDir(), "jwks.json")
	resp, err := http.Get(base + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jwksFile, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	// Issue 17 item 6: the data dir, its keys folder and a compliance
	// bundle are key sources too (a folder was "is a directory", a bundle
	// was not a JWKS).
	bundle := filepath.Join(t.TempDir(), "bundle.json")
	if out, code := cliRun(t, bin, "export", "--data", data, "--agent", agent["agent_id"].(string), "--out", bundle); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, out)
	}
	for _, src := range []string{jwksFile, base + "/.well-known/jwks.json", data, filepath.Join(data, "keys"), bundle} {
		out, code := cliRun(t, bin, "verify-attestation", "--jwks", src, token)
		if code != 0 || !strings.HasPrefix(out, "VALID") || !strings.Contains(out, `"decision": "APPROVED"`) {
			t.Fatalf("verify-attestation --jwks %s: exit %d\n%s", src, code, out)
		}
	}
	// Flip one character of the signature.
	sig := token[strings.LastIndexByte(token, '.')+1:]
	c := byte('A')
	if sig[5] == 'A' {
		c = 'B'
	}
	bad := token[:len(token)-len(sig)+5] + string(c) + sig[6:]
	if out, code := cliRun(t, bin, "verify-attestation", "--jwks", jwksFile, bad); code != 1 || !strings.HasPrefix(out, "INVALID") {
		t.Fatalf("a tampered attestation: exit %d\n%s", code, out)
	}
	cliStop(t, srv)

	out, code = cliRun(t, bin, "keys", "rotate-signing", "--data", data)
	if code != 0 || !strings.Contains(out, "active signing key") {
		t.Fatalf("rotate-signing: exit %d\n%s", code, out)
	}
	srv, _, addr = cliServe(t, bin, []string{"--data", data, "--http", "127.0.0.1:0", "--api-key", "admin-key"}, nil)
	base = "http://" + addr
	if out, code := cliRun(t, bin, "verify-attestation", "--jwks", base+"/.well-known/jwks.json", token); code != 0 || !strings.HasPrefix(out, "VALID") {
		t.Fatalf("after rotation the old token verifies: exit %d\n%s", code, out)
	}
	cliStop(t, srv)
}

// TestCLIReplayExitsOneOnADifference: `replay` exits 0 on an intact data
// dir and 1 when a projection no longer matches the log.
func TestCLIReplayExitsOneOnADifference(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	srv, _, addr := cliServe(t, bin, []string{"--data", data, "--http", "127.0.0.1:0", "--api-key", "admin-key"}, nil)
	st, _, err := call(context.Background(), http.DefaultClient, "POST", "http://"+addr+"/agents/register", map[string]string{"X-API-Key": "admin-key"},
		map[string]any{"agent": map[string]any{"name": "a", "type": "supervised", "principal_id": "org_1"}})
	if err != nil || st != 201 {
		t.Fatalf("register: %d %v", st, err)
	}
	cliStop(t, srv)
	if out, code := cliRun(t, bin, "replay", "--data", data, "--verify"); code != 0 || !strings.Contains(out, "projections: identical") {
		t.Fatalf("intact: exit %d\n%s", code, out)
	}

	// Change one byte of one projection value behind the gate's back.
	db, err := pebble.Open(filepath.Join(data, "state"), &pebble.Options{Logger: quietPebble{t}})
	if err != nil {
		t.Fatal(err)
	}
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	var k, v []byte
	for it.First(); it.Valid(); it.Next() {
		if strings.Contains(string(it.Value()), `"name":"a"`) {
			k, v = append([]byte(nil), it.Key()...), append([]byte(nil), it.Value()...)
			break
		}
	}
	it.Close()
	if k == nil {
		t.Fatal("no agent projection found")
	}
	v = []byte(strings.Replace(string(v), `"name":"a"`, `"name":"b"`, 1))
	if err := db.Set(k, v, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, code := cliRun(t, bin, "replay", "--data", data)
	if code != 1 || !strings.Contains(out, "projections differ") {
		t.Fatalf("tampered projection: exit %d\n%s", code, out)
	}
}

// TestCLISIGTERMDrainsInFlightRequests: SIGTERM while a request is being
// verified (a logic query z3 works on for seconds) lets it finish with
// its answer, refuses new connections, and exits 0; the answered call is
// in the log.
func TestCLISIGTERMDrainsInFlightRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if _, err := exec.LookPath("z3"); err != nil {
		t.Fatalf("the in-flight request is a z3 query (apt-get install z3): %v", err)
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	srv, _, addr := cliServe(t, bin, []string{"--data", data, "--http", "127.0.0.1:0", "--api-key", "admin-key"}, nil)
	base := "http://" + addr
	type result struct {
		status int
		body   map[string]any
		err    error
	}
	res := make(chan result, 1)
	idle := z3CPUTicks(srv.Process.Pid)
	start := time.Now()
	go func() {
		st, body, err := call(context.Background(), &http.Client{Timeout: 30 * time.Second}, "POST", base+"/verify",
			map[string]string{"X-API-Key": "admin-key", "Idempotency-Key": "drain-1"}, map[string]any{
				"type":    "logic",
				"query":   "(LET ((x Int) (y Int) (z Int)) (AND (EQ (PLUS (MULT x x x) (MULT y y y) (MULT z z z)) 42) (GT x 1000000)))",
				"options": map[string]any{"timeout_ms": 2500},
			})
		res <- result{st, body, err}
	}()
	// The request is with z3 once the gate's z3 processes work on it: their
	// CPU time grows by 100 ms (they are idle until then).
	for z3CPUTicks(srv.Process.Pid) < idle+10 {
		select {
		case r := <-res:
			t.Fatalf("answered before z3 worked on it: %d %v %v", r.status, r.body, r.err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// New connections are refused while the request drains.
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		select {
		case r := <-res:
			t.Fatalf("a new connection was accepted after SIGTERM until the in-flight request was answered (%d %v %v)", r.status, r.body, r.err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	r := <-res
	t.Logf("answered after %s: %d %v", time.Since(start), r.status, r.body["status"])
	if r.err != nil || r.body["status"] == nil {
		t.Fatalf("the in-flight request was cut off: %d %v %v", r.status, r.body, r.err)
	}
	if time.Since(start) < 2*time.Second {
		t.Fatalf("answered after %s: the query was not in flight during SIGTERM (%d %v)", time.Since(start), r.status, r.body)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		t.Logf("exited after %s", time.Since(start))
		if err != nil {
			t.Fatalf("exit after drain: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the gate did not exit after draining")
	}
	md, _ := r.body["metadata"].(map[string]any)
	seq, _ := md["seq"].(float64)
	if seq < 1 {
		t.Fatalf("the drained answer names no log position: %v", r.body)
	}
	if out, code := cliRun(t, bin, "replay", "--data", data, "--verify"); code != 0 {
		t.Fatalf("replay after drain: exit %d\n%s", code, out)
	}
}

// Issue 11 item 12: the offline credential commands rotate and revoke a
// principal's keys (the old ones are refused by the served API), and
// neither they nor `replay` mint an admin key: a data dir they touched
// has no admin key hash, and nothing printed one.
func TestCLIKeysRotateRevokeAndNoAdminKeyMinted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	created := regexp.MustCompile(`principal org_cli key (\S+) (?:replaces \S+ )?\(shown once\): (qwed_key_\S+)`)
	var outs []string
	keyOf := func(args ...string) (id, key string) {
		t.Helper()
		out, code := cliRun(t, bin, args...)
		outs = append(outs, out)
		m := created.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
		return m[1], m[2]
	}
	id1, k1 := keyOf("keys", "create", "--data", data, "--principal", "org_cli")
	id2, k2 := keyOf("keys", "rotate", "--data", data, "--principal", "org_cli", "--key-id", id1)
	if id2 == id1 {
		t.Fatalf("rotation kept the key id %s", id1)
	}
	_, k3 := keyOf("keys", "create", "--data", data, "--principal", "org_cli")
	out, code := cliRun(t, bin, "keys", "revoke", "--data", data, "--principal", "org_cli", "--key-id", id2)
	outs = append(outs, out)
	if code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("keys revoke: exit %d\n%s", code, out)
	}
	// Idempotent: the same revocation again answers what was recorded.
	if out, code := cliRun(t, bin, "keys", "revoke", "--data", data, "--principal", "org_cli", "--key-id", id2); code != 0 {
		t.Fatalf("revoking a revoked key again: exit %d\n%s", code, out)
	}
	// A key that is not the principal's is refused.
	if out, code := cliRun(t, bin, "keys", "revoke", "--data", data, "--principal", "org_other", "--key-id", id1); code == 0 {
		t.Fatalf("revoking another principal's key succeeded:\n%s", out)
	}
	out, code = cliRun(t, bin, "replay", "--data", data, "--verify")
	outs = append(outs, out)
	if code != 0 {
		t.Fatalf("replay --verify: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(data, "admin_key.sha256")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an offline command minted an admin key: %v", err)
	}
	for _, o := range outs {
		if strings.Contains(o, "qwed_admin_") {
			t.Fatalf("an offline command printed an admin key:\n%s", o)
		}
	}
	srv, _, addr := cliServe(t, bin, []string{"--data", data, "--http", "127.0.0.1:0", "--api-key", "admin-key"}, nil)
	defer cliStop(t, srv)
	for key, want := range map[string]int{k1: 401, k2: 401, k3: 200} {
		st, body, err := call(context.Background(), http.DefaultClient, "GET", "http://"+addr+"/approvals", map[string]string{"X-API-Key": key}, nil)
		if err != nil || st != want {
			t.Fatalf("GET /approvals with key %s…: %d %v %v, want %d", key[:14], st, body, err, want)
		}
	}
}

// z3CPUTicks sums the CPU time (user and system, in clock ticks) of the
// z3 processes the process pid started, from /proc.
func z3CPUTicks(pid int) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	ticks := 0
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		head, rest, _ := strings.Cut(string(b), ") ")
		f := strings.Fields(rest)
		if !strings.HasSuffix(head, "(z3") || len(f) < 13 || f[1] != strconv.Itoa(pid) {
			continue
		}
		u, _ := strconv.Atoi(f[11])
		s, _ := strconv.Atoi(f[12])
		ticks += u + s
	}
	return ticks
}
