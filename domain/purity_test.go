package domain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// allowedImports is everything domain/ may import (DESIGN.md §5): pure
// standard library packages and pure libraries. No os, net, io/ioutil,
// math/rand, crypto/rand, log or anything else that reaches the outside.
var allowedImports = map[string]bool{
	"bytes": true, "crypto/sha256": true, "crypto/subtle": true, "encoding/hex": true,
	"encoding/json": true, "errors": true, "fmt": true, "maps": true, "math": true,
	"math/big": true, "math/bits": true, "slices": true, "sort": true, "strconv": true,
	"strings": true, "sync": true, "time": true, "unicode": true, "unicode/utf8": true,
	"github.com/cockroachdb/apd/v3":                 true,
	"github.com/agentgate/agentgate/domain/jcs":     true,
	"github.com/agentgate/agentgate/domain/engines": true,
}

// forbiddenTimeCalls read the clock or wait on it.
var forbiddenTimeCalls = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "Tick": true, "NewTicker": true, "NewTimer": true,
}

// TestDesign5_DomainImportsOnlyPurePackages pins invariant 1 (DESIGN.md §2,
// §5): the non-test files of domain/ (domain/jcs has its own test) import
// only the allow-list and never call time.Now, time.Since, time.Until or a
// timer.
func TestDesign5_DomainImportsOnlyPurePackages(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		timeName := ""
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowedImports[p] {
				t.Errorf("%s imports %q, which is not on the domain allow-list", path, p)
			}
			if p == "time" {
				timeName = "time"
				if imp.Name != nil {
					timeName = imp.Name.Name
				}
			}
		}
		if timeName == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == timeName && forbiddenTimeCalls[sel.Sel.Name] {
				t.Errorf("%s: %s.%s reads the clock; time must come from Env.Now", fset.Position(sel.Pos()), timeName, sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked only %d files: is the test running in domain/?", checked)
	}
}
