package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kafkaScript extracts the README's kcat blocks (the sh block after "With
// `make run-kafka` running", then the one of "A2A over Kafka", run in the
// same shell), with BROKER and ADMIN set to the test's.
func kafkaScript(t *testing.T, broker, admin string) string {
	t.Helper()
	set := map[string]string{"BROKER=": broker, "ADMIN=": admin}
	return readmeBlock(t, "With `make run-kafka` running", set) + readmeBlock(t, "Agent-to-agent messages (QWED A2A) go through", set)
}

// runScript runs script with bash -euo pipefail in dir (a scratch
// directory when ""), with env added to the environment, killed after
// timeout, and returns its stdout and stderr; it fails the test (showing
// the gate's logs) when the script fails.
func runScript(t *testing.T, what, script string, timeout time.Duration, logs fmt.Stringer, dir string, env ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	sh.Dir = dir
	if dir == "" {
		sh.Dir = t.TempDir()
	}
	sh.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	sh.Stdout, sh.Stderr = &stdout, &stderr
	if err := sh.Run(); err != nil {
		t.Fatalf("%s failed: %v\nstdout:\n%s\nstderr:\n%s\ngate:\n%s", what, err, stdout.String(), stderr.String(), logs)
	}
	return stdout.String(), stderr.String()
}

func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Issue 3 "make run-kafka starts it and the gate together; the README shows
// how to publish a request with kcat and read the reply": `make run-kafka`
// brings up dev-kafka and the gate, the README's kcat commands run as
// written (register, verify, read the reply and the decision; every poll
// bounded), and Ctrl-C (SIGINT to the process group, as a terminal sends
// it) stops both. Issue 11 item 5 "the README tour fails in Kafka mode":
// before Ctrl-C, the five-minute tour's HTTP calls run as written against
// that gate, from a scratch directory, and show what each step promises.
// Issue 13 item 8: the README's "A2A over Kafka" kcat commands run as
// written after them (trust, a forwarded verdict, the forwarded message
// with its headers, a blocked verdict on agentgate.decisions).
func TestReadmeKafkaMakeRunKafkaAndKcat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, tool := range []string{"bash", "make", "kcat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's Kafka section needs %s (.ci/run and make deps install it): %v", tool, err)
		}
	}
	// The gate binds a free HTTP port itself (HTTP=127.0.0.1:0). The broker
	// cannot: make run-kafka gives its KAFKA to both processes, started
	// together, so its port is picked here and may, rarely, be taken by
	// another process before dev-kafka binds it.
	broker := freeAddr(t)
	dir := t.TempDir()
	mk := startMake(t, "run-kafka", "DEV_KAFKA_DATA="+filepath.Join(dir, "dev-kafka"),
		"KAFKA_GATE_DATA="+filepath.Join(dir, "kafka-gate"), "KAFKA="+broker, "HTTP=127.0.0.1:0", "API_KEY=readme-admin")
	httpAddr := mk.waitHealthy(t)
	logs := mk.logs

	out, _ := runScript(t, "the README's kcat commands", kafkaScript(t, broker, "readme-admin"), 90*time.Second, logs, "")
	for _, want := range []struct{ what, text string }{
		{"1. the registration reply, with the token once", `"agent_token":"qwed_agent_`},
		{"1. the registration reply's status", "agentgate-status=201"},
		{"2. the verify reply's type", "ce_type=qwed.agent.action.verify.reply"},
		{"2. the verify reply's status", "agentgate-status=200"},
		{"2. the decision", `"decision":"APPROVED"`},
		{"3. the async request's decision on agentgate.decisions", "ce_correlationid=verify-2"},
		{"3. its type", "ce_type=agentgate.decision"},
		{"A2A 1. the boundary change answered", "ce_type=qwed.a2a.boundary.reply"},
		{"A2A 2. the forwarded verdict", `"status":"forwarded"`},
		{"A2A 2. its engine", `"engine_used":"finance_guard"`},
		{"A2A 3. the forwarded message", "ce_type=qwed.a2a.forwarded"},
		{"A2A 3. its verdict header", "qwed-a2a-status=forwarded"},
		{"A2A 3. its attestation header", "qwed-a2a-attestation=eyJ"},
		{"A2A 4. the blocked verdict", "claimed_total=999.99, computed_total=150.00"},
		{"A2A 4. the blocked verdict on agentgate.decisions", "ce_correlationid=a2a-2"},
	} {
		if !strings.Contains(out, want.text) {
			t.Errorf("%s: %q not in the output:\n%s", want.what, want.text, out)
		}
	}

	// The five-minute tour, as written, against the same gate: in Kafka
	// mode each call's answer is readable at once through the instance
	// (the key issued then used, the approval approved right after its
	// PENDING decision, the activity read right after the decisions).
	runTour(t, tourScript(t, "readme-admin", "http://"+httpAddr), 2*time.Minute, logs)

	// Ctrl-C stops both, make ends with status 0.
	mk.interrupt(t)
	for _, addr := range []string{broker, httpAddr} {
		if listening(addr) {
			t.Fatalf("%s still listening after Ctrl-C\n%s", addr, logs)
		}
	}
	if !strings.Contains(logs.String(), "dev-kafka listening on "+broker) || !strings.Contains(logs.String(), `msg=stopped`) {
		t.Fatalf("make run-kafka did not start and stop both as expected:\n%s", logs)
	}
	// Issue 17 item 13: no line per partition log opened or closed; and
	// the broker outlives the gate's drain, so its final checkpoints are
	// appended.
	for _, noise := range []string{"kafka event log opened", "kafka event log closed", `msg="appending the final log checkpoint"`} {
		if strings.Contains(logs.String(), noise) {
			t.Errorf("make run-kafka logged %q:\n%s", noise, logs)
		}
	}
}

// freeAddr returns a loopback address that was free a moment ago. Only for
// a process that cannot bind port 0 and say where it listens: another
// process may take the port before it is bound again. Gates (serve, --http
// 127.0.0.1:0) and brokers (dev-kafka --listen 127.0.0.1:0) bind their own.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
