package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// gateBinary returns the agentgate binary: AGENTGATE_BIN, else one built
// from this tree into the test's folder.
func gateBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("AGENTGATE_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "agentgate")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/agentgate").CombinedOutput()
	if err != nil {
		t.Fatalf("building agentgate: %v\n%s", err, out)
	}
	return bin
}

// startProcess starts bin with args, its output kept for failures, and
// stops it at the end of t.
func startProcess(t *testing.T, bin string, args ...string) *lockedBuffer {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "AGENTGATE_API_KEY=", "AGENTGATE_URL=")
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return out
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor polls cond every 50 ms until it holds or 60 s pass.
func waitFor(t *testing.T, what string, logs *lockedBuffer, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not ready after 60 s\n%s", what, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startKafkaGate runs the Kafka deployment as `agentgate serve
// --kafka-brokers` on `agentgate dev-kafka` (kfake, in memory), both real
// processes, and returns it behind front (nil: none), a reverse proxy on a
// real socket.
func startKafkaGate(t *testing.T, front func(http.Handler) http.Handler) *testGate {
	t.Helper()
	bin := gateBinary(t)
	brokerLogs := startProcess(t, bin, "dev-kafka", "--listen", "127.0.0.1:0", "--data", "")
	listening := regexp.MustCompile(`(?m)^(?:dev-kafka|agentgate) listening on (?:http://)?(127\.0\.0\.1:\d+)`)
	waitFor(t, "dev-kafka", brokerLogs, func() bool { return listening.MatchString(brokerLogs.String()) })
	broker := listening.FindStringSubmatch(brokerLogs.String())[1]
	// The gate binds a free port itself and says which.
	gateLogs := startProcess(t, bin, "serve", "--kafka-brokers", broker, "--data", filepath.Join(t.TempDir(), "gate"),
		"--http", "127.0.0.1:0", "--api-key", adminKey)
	waitFor(t, "serve --kafka-brokers to listen", gateLogs, func() bool { return listening.MatchString(gateLogs.String()) })
	addr := listening.FindStringSubmatch(gateLogs.String())[1]
	waitFor(t, "serve --kafka-brokers", gateLogs, func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	target, _ := url.Parse("http://" + addr)
	var h http.Handler = httputil.NewSingleHostReverseProxy(target)
	if front != nil {
		h = front(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &testGate{URL: srv.URL, srv: srv}
}

// TestHTTPClientKafkaDeployment: the client against the Kafka deployment
// (the gate's log on Kafka): the agent's flow with generated contexts, an
// attestation verified offline, decisions as results, an approval, the
// isolation of tenants, and a lost answer retried with its key (one
// decision).
func TestHTTPClientKafkaDeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and a broker")
	}
	ctx := context.Background()
	var lost string
	log := &attemptLog{}
	g := startKafkaGate(t, func(gate http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if isVerify(r) {
				if n := log.add(r); n == 1 {
					rec := httptest.NewRecorder()
					gate.ServeHTTP(rec, r)
					lost = rec.Body.String()
					refusal(w, http.StatusBadGateway, "QWED-SYS-002", "")
					return
				}
			}
			gate.ServeHTTP(w, r)
		})
	})
	acme, globex := g.principal(t, "org_acme"), g.principal(t, "org_globex")
	agent, reg := register(t, acme, "org_acme", "kafka-agent", domain.Permissions{}, domain.Limits{MaxDailyCost: usd(t, "1")})
	_, regB := register(t, globex, "org_globex", "other", domain.Permissions{}, domain.Limits{})

	// The first verify's answer is lost: the retry gets the decision the
	// gate recorded, under the same key.
	d, err := agent.VerifyRequest(ctx, domain.VerifyAction{Action: domain.Action{Type: "calculate", Query: "2+2"},
		Options: domain.Options{RequireAttestation: true}})
	if err != nil || d.Decision != domain.Approved || d.Attestation == "" || !strings.Contains(lost, d.ActionID) {
		t.Fatalf("verify with a lost answer: %+v %v (lost %s)", d, err, lost)
	}
	if keys, _ := log.snapshot(); len(keys) != 2 || keys[0] != keys[1] {
		t.Fatalf("attempts' keys %q", keys)
	}
	if c, err := acme.VerifyAttestation(ctx, d.Attestation); err != nil || c.ActionID != d.ActionID {
		t.Fatalf("VerifyAttestation: %+v %v", c, err)
	}
	over, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "3+3", EstimatedCost: usd(t, "5")}, nil)
	if err != nil || over.Decision != domain.BudgetExceeded {
		t.Fatalf("over budget: %+v %v", over, err)
	}
	pending, err := agent.VerifyToolCall(ctx, "send_email", map[string]string{"to": "a@example.com"})
	if err != nil || pending.Decision != domain.Pending || pending.Approval == nil {
		t.Fatalf("tool call: %+v %v", pending, err)
	}
	if res, err := acme.Approve(ctx, pending.Approval.ID, "ok"); err != nil || res.Approval.Status != domain.ApprovalApproved {
		t.Fatalf("Approve: %+v %v", res, err)
	}
	if v, err := agent.Get(ctx); err != nil || v.TotalActions != 3 {
		t.Fatalf("the agent after three decisions (one retried): %+v %v", v, err)
	}
	_, err = acme.Agent(regB.AgentID, agent.Token()).Get(ctx)
	wantCode(t, "acme's agent's token reading globex's agent", err, 401, domain.CodeInvalidAgentToken)
	_, err = acme.GetAgent(ctx, regB.AgentID)
	wantCode(t, "acme reading globex's agent", err, 403, domain.CodeForbidden)
	if !strings.HasPrefix(reg.AgentID, "agent_") {
		t.Fatalf("registration: %+v", reg)
	}
}
