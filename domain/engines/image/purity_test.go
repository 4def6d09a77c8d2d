package image

import (
	goparser "go/parser"
	gotoken "go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDesign5_EnginePurity pins the engine rules (DESIGN.md §2, §5): the
// non-test files import only pure packages (no os, net, time, math/rand,
// crypto/rand, log or sync: no IO, clock, randomness or goroutines).
func TestDesign5_EnginePurity(t *testing.T) {
	allowed := map[string]bool{
		"bytes": true, "context": true, "encoding/base64": true, "encoding/binary": true, "encoding/csv": true,
		"crypto/sha256": true, "encoding/hex": true,
		"encoding/json": true, "errors": true, "fmt": true, "image/gif": true, "image/jpeg": true, "image/png": true,
		"io": true, "math/big": true, "slices": true, "strconv": true, "strings": true, "unicode": true,
		"unicode/utf8": true, "github.com/agentgate/agentgate/domain/engines": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(gotoken.NewFileSet(), path, nil, goparser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[p] {
				t.Errorf("%s imports %q, which an engine may not", path, p)
			}
		}
	}
	if checked < 2 {
		t.Fatalf("checked only %d files", checked)
	}
}
