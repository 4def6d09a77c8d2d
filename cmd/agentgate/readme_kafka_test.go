package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// kafkaScript extracts the README's kcat block (the sh block after "With
// `make run-kafka` running"), with BROKER and ADMIN set to the test's.
func kafkaScript(t *testing.T, readme, broker, admin string) string {
	t.Helper()
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	state := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && strings.HasPrefix(line, "With `make run-kafka` running"):
			state = 1
		case state == 1 && line == "```sh":
			state = 2
		case state == 2 && line == "```":
			return out.String()
		case state == 2 && strings.HasPrefix(line, "BROKER="):
			out.WriteString("BROKER=" + broker + "\n")
		case state == 2 && strings.HasPrefix(line, "ADMIN="):
			out.WriteString("ADMIN=" + admin + "\n")
		case state == 2:
			out.WriteString(line + "\n")
		}
	}
	t.Fatal("README.md has no kcat block after \"With `make run-kafka` running\"")
	return ""
}

// runScript runs script with bash -euo pipefail in a scratch directory,
// killed after timeout, and returns its stdout and stderr; it fails the
// test (showing the gate's logs) when the script fails.
func runScript(t *testing.T, what, script string, timeout time.Duration, logs fmt.Stringer) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	sh.Dir = t.TempDir()
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
func TestReadmeKafkaMakeRunKafkaAndKcat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, tool := range []string{"bash", "make", "kcat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's Kafka section needs %s (.ci/run and make deps install it): %v", tool, err)
		}
	}
	broker, httpAddr := freeAddr(t), freeAddr(t)
	data := filepath.Join(t.TempDir(), "data")
	mk := exec.Command("make", "-s", "-C", "../..", "run-kafka", "DATA="+data, "KAFKA="+broker, "HTTP="+httpAddr, "API_KEY=readme-admin")
	mk.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logs := &syncBuffer{}
	mk.Stdout, mk.Stderr = logs, logs
	if err := mk.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = mk.Wait(); close(exited) }()
	defer func() {
		select {
		case <-exited:
		default:
			_ = syscall.Kill(-mk.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}()
	deadline := time.Now().Add(3 * time.Minute) // make builds the binary first
	for {
		resp, err := http.Get("http://" + httpAddr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case <-exited:
			t.Fatalf("make run-kafka exited: %v\n%s", mk.ProcessState, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("make run-kafka: the gate never became healthy\n%s", logs)
		}
		time.Sleep(100 * time.Millisecond)
	}

	out, _ := runScript(t, "the README's kcat commands", kafkaScript(t, "../../README.md", broker, "readme-admin"), 90*time.Second, logs)
	for _, want := range []struct{ what, text string }{
		{"1. the registration reply, with the token once", `"agent_token":"qwed_agent_`},
		{"1. the registration reply's status", "agentgate-status=201"},
		{"2. the verify reply's type", "ce_type=qwed.agent.action.verify.reply"},
		{"2. the verify reply's status", "agentgate-status=200"},
		{"2. the decision", `"decision":"APPROVED"`},
		{"3. the async request's decision on agentgate.decisions", "ce_correlationid=verify-2"},
		{"3. its type", "ce_type=agentgate.decision"},
	} {
		if !strings.Contains(out, want.text) {
			t.Errorf("%s: %q not in the output:\n%s", want.what, want.text, out)
		}
	}

	// The five-minute tour, as written, against the same gate: in Kafka
	// mode each call's answer is readable at once through the instance
	// (the key issued then used, the approval approved right after its
	// PENDING decision, the activity read right after the decisions).
	bin, err := filepath.Abs("../../bin/agentgate") // make run-kafka built it
	if err != nil {
		t.Fatal(err)
	}
	tour := strings.ReplaceAll(tourScript(t, "../../README.md", "readme-admin", "http://"+httpAddr), "go run ./cmd/agentgate", bin)
	tout, terr := runScript(t, "the tour in Kafka mode", tour, 2*time.Minute, logs)
	checkTour(t, tout+terr)

	// Ctrl-C: SIGINT to the foreground process group stops both.
	if err := syscall.Kill(-mk.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("make run-kafka still running 30 s after Ctrl-C\n%s", logs)
	}
	for _, addr := range []string{broker, httpAddr} {
		if listening(addr) {
			t.Fatalf("%s still listening after Ctrl-C\n%s", addr, logs)
		}
	}
	if !strings.Contains(logs.String(), "dev-kafka listening on "+broker) || !strings.Contains(logs.String(), `msg=stopped`) {
		t.Fatalf("make run-kafka did not start and stop both as expected:\n%s", logs)
	}
}
