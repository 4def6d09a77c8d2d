package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The agentgate binary the process tests run, built once per test run into
// a directory TestMain removes.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
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
