package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestQWEDProtocol_8_3_EngineInitializationFailedOverHTTP runs the real
// binary with one engine worker: once that worker is killed and the
// binary it would be restarted from is gone, POST /verify of an sql query
// that needs a fresh worker answers 500 ERROR with QWED-ENG-001 (QWED protocol v1.0 §8.3, engine
// initialization failed, details.reason worker_start); with the binary
// back, the next call is answered again.
func TestQWEDProtocol_8_3_EngineInitializationFailedOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin, built := movableBinary(t)
	cmd, out, addr := cliServe(t, bin, []string{"--data", filepath.Join(t.TempDir(), "data"), "--http", "127.0.0.1:0",
		"--api-key", "admin-key", "--engine-workers", "1"}, nil)
	checkEngineInitializationFailed(t, bin, built, cmd.Process.Pid, addr, "admin-key", out)
}

// TestQWEDProtocol_8_3_EngineInitializationFailed_Kafka is the same in
// the Kafka deployment: the HTTP instance's engine host answers
// QWED-ENG-001 when it cannot start a worker, and the verdict is recorded
// through the broker.
func TestQWEDProtocol_8_3_EngineInitializationFailed_Kafka(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin, built := movableBinary(t)
	broker := devKafkaProcess(t, buildBinary(t), filepath.Join(t.TempDir(), "broker"))
	g := startKafkaGate(t, bin, broker, filepath.Join(t.TempDir(), "gate"), "--engine-workers", "1")
	g.waitServesAll(t)
	checkEngineInitializationFailed(t, bin, built, g.cmd.Process.Pid, g.http, killAdminKey, g.log)
}

// movableBinary copies the test binary where the test may remove it; it
// returns the copy's path and the binary's bytes.
func movableBinary(t *testing.T) (string, []byte) {
	t.Helper()
	built, err := os.ReadFile(buildBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "agentgate")
	if err := os.WriteFile(bin, built, 0o700); err != nil {
		t.Fatal(err)
	}
	return bin, built
}

// checkEngineInitializationFailed kills the one engine worker of the gate
// whose process is pid, serving addr from bin, with bin gone, and expects
// QWED-ENG-001 from POST /verify; then puts bin back (built) and expects
// a verdict again.
func checkEngineInitializationFailed(t *testing.T, bin string, built []byte, pid int, addr, key string, out fmt.Stringer) {
	t.Helper()
	client := &http.Client{Timeout: 20 * time.Second}
	verify := func() (int, map[string]any) {
		t.Helper()
		status, m, err := call(context.Background(), client, "POST", "http://"+addr+"/verify",
			map[string]string{"X-API-Key": key}, map[string]any{"query": "SELECT 1", "type": "sql"})
		if err != nil {
			t.Fatalf("POST /verify: %v\n%s", err, out.String())
		}
		return status, m
	}
	if status, m := verify(); status != 200 || m["status"] != "VERIFIED" {
		t.Fatalf("before: %d %v", status, m)
	}
	// Any thread of the gate may have started a child.
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	if err != nil || len(tasks) == 0 {
		t.Fatalf("listing the gate's threads: %v", err)
	}
	var raw []string
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("listing the gate's child processes: %v", err)
		}
		raw = append(raw, strings.Fields(string(b))...)
	}
	var workers []string // the engine workers among the children (z3 processes are others)
	for _, c := range raw {
		if argv, err := os.ReadFile("/proc/" + c + "/cmdline"); err == nil && strings.Contains(string(argv), "engine-worker") {
			workers = append(workers, c)
		}
	}
	if len(workers) != 1 {
		t.Fatalf("want one engine worker among the children %v, found %v", raw, workers)
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	worker, _ := strconv.Atoi(workers[0])
	if err := syscall.Kill(worker, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The call that finds the worker dead while it sends is that worker's
	// death (QWED-ENG-002, worker_died) unless the host saw it die first;
	// the call after it needs a fresh worker and cannot start one.
	status, m := verify()
	e, _ := m["error"].(map[string]any)
	if e["code"] == "QWED-ENG-002" {
		status, m = verify()
		e, _ = m["error"].(map[string]any)
	}
	d, _ := e["details"].(map[string]any)
	if status != 500 || m["status"] != "ERROR" || e["code"] != "QWED-ENG-001" || d["reason"] != "worker_start" {
		t.Fatalf("without a worker: %d %v", status, m)
	}
	if err := os.WriteFile(bin, built, 0o700); err != nil {
		t.Fatal(err)
	}
	if status, m := verify(); status != 200 || m["status"] != "VERIFIED" {
		t.Fatalf("with the binary back: %d %v", status, m)
	}
}
