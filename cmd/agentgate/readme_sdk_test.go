package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeFence returns the first ```lang block of README.md after the line
// that starts with after.
func readmeFence(t *testing.T, after, lang string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	state := 0 // 0: before the line, 1: before its block, 2: in the block
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && strings.HasPrefix(line, after):
			state = 1
		case state == 1 && line == "```"+lang:
			state = 2
		case state == 2 && line == "```":
			return out.String()
		case state == 2:
			out.WriteString(line + "\n")
		}
	}
	t.Fatalf("README.md has no %s block after %q", lang, after)
	return ""
}

// runQuickStart runs name with args from the repository root, with env
// added, bounded by timeout, and returns its output; a failure fails t
// with the output and the gate's logs.
func runQuickStart(t *testing.T, timeout time.Duration, logs interface{ String() string }, env []string, name string, args ...string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s\ngate:\n%s", name, args, err, out, logs)
	}
	return string(out)
}

// TestMakeTestBuildsTheQuickStartsFirst: make test builds what the
// README's quick starts import before go test runs them, so that
// TestReadmeClients runs every one of them (none skipped) in CI.
func TestMakeTestBuildsTheQuickStartsFirst(t *testing.T) {
	full := makeDryRun(t, "test")
	goTest := strings.Index(full, "go test -count=1 ./...")
	for _, sdk := range []string{"sdk/typescript", "sdk/mcp"} {
		build := strings.Index(full, "cd "+sdk+" && npm ci --no-audit --no-fund && npm run build")
		if build < 0 || goTest < 0 || build > goTest {
			t.Errorf("make test does not build %s before go test (at %d, %d):\n%s", sdk, build, goTest, full)
		}
	}
}

// TestReadmeClients runs the quick starts of the README's "Clients" as
// written, against `make run`'s gate with the admin key it printed in
// AGENTGATE_API_KEY (the README's export line): the Go block with go run,
// the Python block with Debian's python3 and the SDK on PYTHONPATH, the
// TypeScript block with node and the built SDK where `npm install
// ./sdk/typescript` puts it, the MCP block with node, driving the built
// MCP server over stdio with the MCP SDK's client. Each must print what
// its comment promises.
func TestReadmeClients(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if !strings.Contains(readmeFence(t, "## Clients", "sh"), "export AGENTGATE_API_KEY=") {
		t.Fatal(`the README's "Clients" no longer exports AGENTGATE_API_KEY: the quick starts read it`)
	}
	mk, _, addr, admin := startMakeRun(t)
	env := []string{"AGENTGATE_URL=http://" + addr, "AGENTGATE_API_KEY=" + admin}
	approved := regexp.MustCompile(`(?m)^agent_[0-9a-f]+ APPROVED low$`)

	t.Run("python", func(t *testing.T) {
		// Debian's python3 is the one the SDK's suite runs on (make
		// test-python); .ci/run installs it.
		const python = "/usr/bin/python3"
		if _, err := os.Stat(python); err != nil {
			t.Fatalf("the Python quick start runs on %s: %v", python, err)
		}
		src := filepath.Join(t.TempDir(), "quickstart.py")
		if err := os.WriteFile(src, []byte(readmeFence(t, "### Python", "python")), 0o644); err != nil {
			t.Fatal(err)
		}
		out := runQuickStart(t, 2*time.Minute, mk.logs, append(env, "PYTHONPATH=sdk/python"), python, src)
		if !approved.MatchString(out) {
			t.Fatalf("the Python quick start printed %q, want %s", out, approved)
		}
	})

	t.Run("typescript", func(t *testing.T) {
		root, _ := filepath.Abs("../..")
		if _, err := os.Stat(filepath.Join(root, "sdk/typescript/dist/index.js")); err != nil {
			t.Skip("sdk/typescript/dist is not built: make test builds it first (make sdk-build)")
		}
		// In a folder of the user's: npm install <repository>/sdk/typescript
		// (a local folder: no registry), then node quickstart.mjs.
		dir := t.TempDir()
		runQuickStart(t, 2*time.Minute, mk.logs, nil, "npm", "install", "--prefix", dir, "--offline", "--no-audit", "--no-fund", filepath.Join(root, "sdk/typescript"))
		src := filepath.Join(dir, "quickstart.mjs")
		if err := os.WriteFile(src, []byte(readmeFence(t, "### TypeScript", "js")), 0o644); err != nil {
			t.Fatal(err)
		}
		if out := runQuickStart(t, 2*time.Minute, mk.logs, env, "node", src); !approved.MatchString(out) {
			t.Fatalf("the TypeScript quick start printed %q, want %s", out, approved)
		}
	})

	t.Run("mcp", func(t *testing.T) {
		root, _ := filepath.Abs("../..")
		for _, built := range []string{"sdk/mcp/dist/cli.js", "sdk/mcp/node_modules/@modelcontextprotocol/sdk", "sdk/typescript/dist/index.js"} {
			if _, err := os.Stat(filepath.Join(root, built)); err != nil {
				t.Skipf("%s is missing: make test builds it first (make sdk-build)", built)
			}
		}
		// The README's folder, where npm install @modelcontextprotocol/sdk
		// and sdk/typescript ran: here sdk/mcp's own node_modules, which
		// its lockfile pins to the same version, and @agentgate/sdk linked
		// as npm links a local folder (no registry).
		dir := t.TempDir()
		if err := os.Symlink(filepath.Join(root, "sdk/mcp/node_modules"), filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(dir, "mcp-quickstart.mjs")
		if err := os.WriteFile(src, []byte(readmeFence(t, "### MCP", "js")), 0o644); err != nil {
			t.Fatal(err)
		}
		want := regexp.MustCompile(`(?m)^verify_action verify_tool_call get_approval a2a_intercept \| APPROVED$`)
		if out := runQuickStart(t, 2*time.Minute, mk.logs, env, "node", src); !want.MatchString(out) {
			t.Fatalf("the MCP quick start printed %q, want %s", out, want)
		}
	})

	t.Run("go", func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "quickstart.go")
		if err := os.WriteFile(src, []byte(readmeFence(t, "### Go", "go")), 0o644); err != nil {
			t.Fatal(err)
		}
		if out := runQuickStart(t, 5*time.Minute, mk.logs, env, "go", "run", src); !approved.MatchString(out) {
			t.Fatalf("the Go quick start printed %q, want %s", out, approved)
		}
	})
}
