package main

import (
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// Issue 17 item 7: `agentgate version` and `agentgate --version` print the
// commit of the binary `make build` builds (the repository's HEAD) and the
// versions of the modules linked in.
func TestVersionCommandAndFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// make build names the commit (Go stamps none in a git worktree).
	if out, err := exec.Command("make", "-s", "-C", "../..", "build").CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	bin := "../../bin/agentgate"
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	var outs []string
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("agentgate %v: %v\n%s", args, err, out)
		}
		s := string(out)
		outs = append(outs, s)
		if !strings.HasPrefix(s, "agentgate ") {
			t.Errorf("agentgate %v: does not start with the version line:\n%s", args, s)
		}
		if !strings.Contains(s, "commit  "+strings.TrimSpace(string(head))) {
			t.Errorf("agentgate %v: no commit %s:\n%s", args, head, s)
		}
		if !regexp.MustCompile(`(?m)^  github\.com/cockroachdb/pebble/v2 v\S+$`).MatchString(s) {
			t.Errorf("agentgate %v: no module versions:\n%s", args, s)
		}
	}
	if outs[0] != outs[1] {
		t.Errorf("version and --version differ:\n%s\n---\n%s", outs[0], outs[1])
	}
}

func TestVersionTextFormat(t *testing.T) {
	info := &debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "github.com/agentgate/agentgate", Version: "v1.2.3"},
		Deps: []*debug.Module{
			{Path: "a.example/x", Version: "v0.1.0"},
			{Path: "b.example/y", Version: "v2.0.0", Replace: &debug.Module{Path: "../y", Version: "(devel)"}},
		},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}},
	}
	want := "agentgate v1.2.3\ncommit  abc (2026-01-02T03:04:05Z) +modified\ngo      go1.26.0 linux/amd64\nmodules:\n" +
		"  a.example/x v0.1.0\n  b.example/y v2.0.0 => ../y (devel)\n"
	if got := versionText(info, "", "linux/amd64"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	info.Settings = nil
	if got := versionText(info, "", "linux/amd64"); !strings.Contains(got, "commit  unknown\n") {
		t.Errorf("no VCS stamp: got\n%s", got)
	}
	if got := versionText(info, "def", "linux/amd64"); !strings.Contains(got, "commit  def\n") {
		t.Errorf("no VCS stamp, make's commit: got\n%s", got)
	}
}
