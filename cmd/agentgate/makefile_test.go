package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// makeDryRun returns the commands `make -n TARGET…` would run at the
// repository root.
func makeDryRun(t *testing.T, targets ...string) string {
	t.Helper()
	out, err := exec.Command("make", append([]string{"-n", "-s", "-C", "../.."}, targets...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %v: %v\n%s", targets, err, out)
	}
	return string(out)
}

// Issue 17 item 15: `make run`, `make run-kafka`'s gate and its dev
// broker keep their data in three folders, none inside another (they were
// ./data, ./data/kafka-gate and ./data/dev-kafka: resetting the embedded
// gate wiped the Kafka setup); so do the defaults of serve and dev-kafka.
func TestMakeDataDirsAreSeparate(t *testing.T) {
	var dirs []string
	for _, m := range regexp.MustCompile(`--data (\S+)`).FindAllStringSubmatch(makeDryRun(t, "run", "run-kafka"), -1) {
		dirs = append(dirs, m[1])
	}
	if len(dirs) != 3 {
		t.Fatalf("make run run-kafka: want 3 data dirs (gate, Kafka gate, dev broker), got %v", dirs)
	}
	for _, name := range []string{"serve", "dev-kafka"} {
		c, _, err := newRoot().Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, c.Flags().Lookup("data").DefValue)
	}
	for i, a := range dirs {
		for _, b := range dirs[i+1:] {
			a, b := filepath.Clean(a), filepath.Clean(b)
			if a != b && (strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")) {
				t.Errorf("data dir %s is nested with %s", a, b)
			}
		}
	}
	// make run's and serve's default are the same folder; the two Kafka
	// ones are other folders.
	if filepath.Clean(dirs[0]) != filepath.Clean(dirs[3]) || dirs[1] == dirs[0] || dirs[2] == dirs[0] || dirs[1] == dirs[2] {
		t.Errorf("data dirs: make run %s, run-kafka %s and %s, serve's default %s", dirs[0], dirs[1], dirs[2], dirs[3])
	}
}

// Issue 17 item 1: `make run` builds bin/agentgate, then runs it (no `go
// run`, whose exit after Ctrl-C make reported as an error; TestReadmeTour
// runs it and checks the exit status), and says the first build is slow.
func TestMakeRunBuildsThenRunsTheBinary(t *testing.T) {
	out := makeDryRun(t, "-B", "run")
	if strings.Contains(out, "go run") {
		t.Errorf("make run uses go run:\n%s", out)
	}
	build := strings.Index(out, "go build -ldflags '-X main.commit=")
	run := strings.Index(out, "bin/agentgate serve")
	if build < 0 || run < build {
		t.Errorf("make run does not build bin/agentgate then run it:\n%s", out)
	}
	if !strings.Contains(out, "first build") {
		t.Errorf("make run does not say the first build takes minutes:\n%s", out)
	}
}

// Issue 17 item 14: `make test-quick` runs the whole suite once, without
// lint (no staticcheck download) or the -race pass; `make test` keeps both,
// and the README says test downloads staticcheck on first use.
func TestMakeTestQuick(t *testing.T) {
	quick, full := makeDryRun(t, "test-quick"), makeDryRun(t, "test")
	if !strings.Contains(quick, "go test -count=1 ./...") || strings.Contains(quick, "-race") || strings.Contains(quick, "staticcheck") {
		t.Errorf("make test-quick: want one go test of ./..., no -race, no staticcheck:\n%s", quick)
	}
	for _, want := range []string{"go test -count=1 ./...", "-race", "staticcheck", "gofmt"} {
		if !strings.Contains(full, want) {
			t.Errorf("make test lost %q:\n%s", want, full)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"make test-quick", "downloads staticcheck on first use"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
}

// Issue 17 item 4: one documented default admin key for Kafka mode: the
// Makefile's (make run-kafka), docker-compose.yml's and the README's kcat
// examples are the same key.
func TestOneDefaultKafkaAdminKey(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("../../" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	find := func(name, pattern string) string {
		m := regexp.MustCompile(pattern).FindStringSubmatch(read(name))
		if m == nil {
			t.Fatalf("%s: no /%s/", name, pattern)
		}
		return m[1]
	}
	mk := find("Makefile", `(?m)^API_KEY\s*\?=\s*(\S+)`)
	compose := find("docker-compose.yml", `AGENTGATE_API_KEY:\s*\$\{AGENTGATE_API_KEY:-([^}]+)\}`)
	readme := find("README.md", "(?m)^ADMIN=(\\S+)\\s*$")
	if mk != compose || mk != readme {
		t.Errorf("default admin keys differ: Makefile %q, docker-compose.yml %q, README %q", mk, compose, readme)
	}
	if !strings.Contains(read("README.md"), "admin key is `"+mk+"`") {
		t.Errorf("README.md does not document the default admin key %q", mk)
	}
}

// Issue 15 item 5: make test runs the TypeScript SDK's suite (test-sdk),
// from a clean install of its lockfile, against the binary make builds.
func TestMakeTestRunsTheTypeScriptSDK(t *testing.T) {
	full := makeDryRun(t, "test")
	for _, want := range []string{"cd sdk/typescript && npm ci --no-audit --no-fund && npm run build", "AGENTGATE_BIN=", "/bin/agentgate npm test"} {
		if !strings.Contains(full, want) {
			t.Errorf("make test does not run the TypeScript SDK's suite (%q):\n%s", want, full)
		}
	}
}

// make test installs each npm lockfile once: a clean install takes up to
// half a minute on a loaded 2-core machine, and repeating it (sdk-build,
// then every suite again) made make test minutes slower for nothing.
func TestMakeTestInstallsEachLockfileOnce(t *testing.T) {
	installs := map[string]int{}
	for _, m := range regexp.MustCompile(`cd (\S+) && npm ci\b`).FindAllStringSubmatch(makeDryRun(t, "test"), -1) {
		installs[m[1]]++
	}
	for _, dir := range []string{"sdk/typescript", "sdk/mcp", "sdk/integrations", "interop/a2a-js"} {
		if installs[dir] != 1 {
			t.Errorf("make test runs npm ci in %s %d times, want once", dir, installs[dir])
		}
	}
}
