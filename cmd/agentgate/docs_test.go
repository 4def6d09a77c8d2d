package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// userDocs lists the user-facing documents: README.md and docs/*.md.
func userDocs(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatalf("listing docs/: %v", err)
	}
	files := append([]string{filepath.Join("..", "..", "README.md")}, docs...)
	if len(files) < 4 {
		t.Fatalf("found only %v: the test is not looking where the documents are", files)
	}
	return files
}

// TestDocsCiteOnlyWhatTheRepositoryHolds keeps the README and docs/ from
// citing documents a reader of the repository does not have: the project's
// private brief (DESIGN.md) and the specification files by their file names
// ("QWED-Agent spec v1.1 §6.1", "seeds/…"). The specifications are named by title and
// section (docs/specs.md).
func TestDocsCiteOnlyWhatTheRepositoryHolds(t *testing.T) {
	forbidden := []string{"design.md", "seed 00", "seeds/"}
	for _, f := range userDocs(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			low := strings.ToLower(line)
			for _, w := range forbidden {
				if strings.Contains(low, w) {
					t.Errorf("%s:%d cites %q, which is not in the repository (name the specification by title and section, see docs/specs.md): %s",
						filepath.Base(f), i+1, w, strings.TrimSpace(line))
				}
			}
		}
	}
}

// mdLink matches the target of a Markdown link: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinksResolve checks that every relative link of the README and
// docs/ names a file of the repository.
func TestDocsLinksResolve(t *testing.T) {
	links := 0
	for _, f := range userDocs(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist: %v", filepath.Base(f), m[1], err)
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative link found: the pattern no longer matches the documents")
	}
}
