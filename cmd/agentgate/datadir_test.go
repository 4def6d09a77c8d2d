package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// checkDataDirInUse runs commands that open data on the gate pid runs on
// it: each is refused with the data dir and the holder's pid (issue 17
// item 5: it was Pebble's "resource temporarily unavailable").
func checkDataDirInUse(t *testing.T, bin, data string, pid int, cmds ...[]string) {
	t.Helper()
	want := fmt.Sprintf("agentgate: %s is in use by a running agentgate (pid %d)\n", data, pid)
	for _, args := range cmds {
		out, code := cliRun(t, bin, args...)
		if code == 0 || !strings.HasSuffix(out, want) {
			t.Errorf("agentgate %v on a running gate's data dir: exit %d, want %q:\n%s", args, code, want, out)
		}
	}
}

// slogLine is a line of the text handler of log/slog, as every command
// logs.
var slogLine = regexp.MustCompile(`^time=\S+ level=(INFO|WARN|ERROR) msg=`)

// rotateOnLiveGate runs `keys rotate-signing` on the data dir of the gate
// pid serving base, and waits (bounded) until the gate's JWKS lists the new
// key; it returns the new kid. Its log lines are slog's.
func rotateOnLiveGate(t *testing.T, bin, data, base string, pid int) string {
	t.Helper()
	cmd := exec.Command(bin, "keys", "rotate-signing", "--data", data)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("keys rotate-signing on a live gate: %v\n%s%s", err, out, stderr.String())
	}
	m := regexp.MustCompile(fmt.Sprintf(`^active signing key: (\S+) \(the running agentgate, pid %d, signs with it once it has reloaded its keys\)\n$`, pid)).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("keys rotate-signing on a live gate printed %q", out)
	}
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !slogLine.MatchString(l) {
			t.Errorf("keys rotate-signing logs a line not in slog's format: %q", l)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(base + "/.well-known/jwks.json")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), `"kid":"`+m[1]+`"`) {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the running gate's JWKS does not list the rotated key %s after 20 s:\n%s", m[1], b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tokenKID is the kid of a JWS's protected header.
func tokenKID(t *testing.T, token string) string {
	t.Helper()
	h, _, _ := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(h)
	var hdr struct {
		Kid string `json:"kid"`
	}
	if err == nil {
		err = json.Unmarshal(b, &hdr)
	}
	if err != nil {
		t.Fatalf("token header %q: %v", h, err)
	}
	return hdr.Kid
}

// Issue 17 item 5, embedded: a second serve, a replay and an offline keys
// command on a running gate's data dir name the gate's pid; `keys
// rotate-signing` on it makes the running gate sign with the new key at
// once (SIGHUP reloads its keyring), logs as every command does, and the
// log still replays and re-decides byte for byte afterwards.
func TestDataDirInUseAndLiveSigningRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	srv := startServer(t, bin, data)
	pid := srv.cmd.Process.Pid
	checkDataDirInUse(t, bin, data, pid,
		[]string{"serve", "--data", data, "--http", "127.0.0.1:0", "--api-key", "k"},
		[]string{"replay", "--data", data},
		[]string{"keys", "create", "--data", data, "--principal", "org_x"},
		[]string{"keys", "revoke-agent-token", "--data", data, "--agent", "agt_x"})

	base := "http://" + srv.addr
	ctx := context.Background()
	attested := func(conv string) string {
		st, key, err := call(ctx, http.DefaultClient, "POST", base+"/principals/org_rot/keys", map[string]string{"X-API-Key": "admin-key"}, nil)
		if err != nil || st != 201 {
			t.Fatalf("issuing a key: %d %v %v", st, key, err)
		}
		st, agent, err := call(ctx, http.DefaultClient, "POST", base+"/agents/register", map[string]string{"X-API-Key": key["api_key"].(string)},
			map[string]any{"agent": map[string]any{"name": "a", "type": "supervised", "principal_id": "org_rot"}})
		if err != nil || st != 201 {
			t.Fatalf("register: %d %v %v", st, agent, err)
		}
		st, dec, err := call(ctx, http.DefaultClient, "POST", base+"/agents/"+agent["agent_id"].(string)+"/verify",
			map[string]string{"Authorization": "Bearer " + agent["agent_token"].(string)}, map[string]any{
				"action":  map[string]any{"type": "calculate", "query": "6*7=42"},
				"context": map[string]any{"conversation_id": conv, "step_number": 1},
				"options": map[string]any{"require_attestation": true}})
		tok, _ := dec["attestation"].(string)
		if err != nil || st != 200 || tok == "" {
			t.Fatalf("verify: %d %v %v", st, dec, err)
		}
		return tok
	}
	before := tokenKID(t, attested("c1"))
	kid := rotateOnLiveGate(t, bin, data, base, pid)
	if kid == before {
		t.Fatalf("rotate-signing kept the key %s", kid)
	}
	if got := tokenKID(t, attested("c2")); got != kid {
		t.Fatalf("after a live rotation the gate signs with %s, want the new key %s", got, kid)
	}
	cliStop(t, srv.cmd)
	if out, code := cliRun(t, bin, "replay", "--data", data, "--verify"); code != 0 || !strings.Contains(out, ": 0 differ") {
		t.Fatalf("replay --verify after a live rotation: exit %d\n%s", code, out)
	}
	// Stopped, the dir is free again (the lock ends with its process).
	if out, code := cliRun(t, bin, "keys", "rotate-signing", "--data", data); code != 0 || !regexp.MustCompile(`\nactive signing key: \S+\n$`).MatchString(out) {
		t.Fatalf("keys rotate-signing on a stopped gate's dir: exit %d\n%s", code, out)
	}
}

// Issue 17 item 5, Kafka: the same refusal for a second gate on a Kafka
// gate's data dir, and the live rotation reaches the running gate's JWKS.
func TestKafkaDataDirInUseAndLiveSigningRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	broker := devKafkaProcess(t, bin, filepath.Join(dir, "broker"))
	data := filepath.Join(dir, "gate")
	g := startKafkaGate(t, bin, broker, data)
	pid := g.cmd.Process.Pid
	checkDataDirInUse(t, bin, data, pid,
		[]string{"serve", "--kafka-brokers", broker, "--data", data, "--http", "127.0.0.1:0", "--api-key", "k"})
	rotateOnLiveGate(t, bin, data, "http://"+g.http, pid)
	if !strings.Contains(g.log.String(), `msg="reloaded signing keys"`) {
		t.Fatalf("the Kafka gate did not log its reload:\n%s", g.log)
	}
}
