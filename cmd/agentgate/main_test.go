package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentgate/agentgate/schemas/openapi"
)

// The agentgate binary the process tests run, built once per test run into
// a directory TestMain removes.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// TestMain runs the tests with every agentgate serve they start checking
// its HTTP exchanges against the OpenAPI document (openAPICheckEnv, to a
// file of this run; a test that sets its own keeps it), and fails the run
// when some exchange is not described.
func TestMain(m *testing.M) {
	checks, err := os.MkdirTemp("", "agentgate-openapi-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// serve takes every flag from AGENTGATE_<FLAG>, and the README has its
	// reader export AGENTGATE_API_KEY and AGENTGATE_URL: a developer's
	// shell would set the gates these tests start (make run printed no
	// admin key with AGENTGATE_API_KEY set). Each test sets what it needs.
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "AGENTGATE_") && name != openAPICheckEnv {
			_ = os.Unsetenv(name)
		}
	}
	if os.Getenv(openAPICheckEnv) == "" {
		_ = os.Setenv(openAPICheckEnv, filepath.Join(checks, "violations.txt"))
	}
	// The environment checks' tests give files the test user's group: on
	// a machine with user-private groups that group would be private and
	// a group-writable file pass. No group is private unless a test says
	// so (TestEnvIntegrity_AgentSpec9_7_UserPrivateGroup).
	accountFiles.group = ""
	code := m.Run()
	if b, err := os.ReadFile(filepath.Join(checks, "violations.txt")); err == nil && len(b) > 0 {
		fmt.Fprintf(os.Stderr, "openapi: exchanges of agentgate serve the document does not describe:\n%s(%s)\n", b, openapi.FixHint)
		code = 1
	}
	_ = os.RemoveAll(checks)
	if binDir != "" {
		if err := os.RemoveAll(binDir); err != nil {
			fmt.Fprintf(os.Stderr, "removing the test binary: %v\n", err)
		}
	}
	os.Exit(code)
}

// buildBinary returns the path of an agentgate binary built from this
// package, building it on the first call of the test run.
func buildBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "agentgate-test-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "agentgate")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Stderr = os.Stderr
		binErr = cmd.Run()
	})
	if binErr != nil {
		t.Fatalf("building agentgate: %v", binErr)
	}
	return binPath
}
