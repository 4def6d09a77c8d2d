package projections

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
)

// TestTablePrefixesAreDistinct pins the key layout: every table of the
// store (a rune constant named t..., in any file of the package) has its
// own first byte, so that no scan of one table reads another's keys. Two
// tables once shared 'g' and 'h' (the snapshot index and the A2A
// counters), and loading the snapshot index failed on a counter's key.
func TestTablePrefixesAreDistinct(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[rune]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if len(name.Name) < 2 || name.Name[0] != 't' || name.Name[1] < 'A' || name.Name[1] > 'Z' || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.CHAR {
						continue
					}
					r, _, _, err := strconv.UnquoteChar(lit.Value[1:len(lit.Value)-1], '\'')
					if err != nil {
						t.Fatal(err)
					}
					if other, dup := seen[r]; dup {
						t.Errorf("tables %s and %s share the prefix %q", other, name.Name, r)
					}
					seen[r] = name.Name
				}
			}
		}
	}
	if len(seen) < 20 {
		t.Fatalf("found %d tables, want every one of the store's", len(seen))
	}
}
