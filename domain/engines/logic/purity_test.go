package logic

import (
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEnginesCommon_LogicIsPure pins the engine rules: the package's
// non-test files import only pure packages (no os, exec, net, time, log,
// math/rand); the z3 processes live in handlers/verify/z3pool.
func TestEnginesCommon_LogicIsPure(t *testing.T) {
	allowed := map[string]bool{
		"bytes": true, "context": true, "encoding/json": true, "errors": true, "fmt": true,
		"math/big": true, "slices": true, "strconv": true, "strings": true, "unicode": true,
		"unicode/utf8": true, "github.com/agentgate/agentgate/domain/engines": true,
	}
	files, _ := filepath.Glob("*.go")
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(token.NewFileSet(), path, nil, goparser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[p] {
				t.Errorf("%s imports %q", path, p)
			}
		}
	}
	if checked < 8 {
		t.Fatalf("checked %d files", checked)
	}
}
