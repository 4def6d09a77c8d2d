package eventjson

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
)

// Every member a decoder reads claims its own bit of its seen mask
// (d.once), so a repeated member is refused and two different members
// never are: no mask gives one bit to two members. A mask is the variable
// the call names (a function literal's own mask is its own); execCommand's
// is command's (command passes it &seen).
func TestDecoderOnceBitsAreDistinctPerFunction(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	shared := map[string]string{"execCommand": "command"}
	bits := map[string]map[int64]string{} // mask → bit → position of its claim
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if filepath.Ext(name) != ".go" || len(name) > 8 && name[len(name)-8:] == "_test.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "once" || len(call.Args) != 2 {
					return true
				}
				lit, ok := call.Args[1].(*ast.BasicLit)
				if !ok || lit.Kind != token.INT {
					t.Errorf("%s: d.once with a bit that is not a literal", fset.Position(call.Pos()))
					return true
				}
				bit, err := strconv.ParseInt(lit.Value, 0, 64)
				if err != nil || bit < 0 || bit > 63 {
					t.Errorf("%s: bit %s outside 0-63", fset.Position(call.Pos()), lit.Value)
					return true
				}
				mask := call.Args[0]
				if u, ok := mask.(*ast.UnaryExpr); ok && u.Op == token.AND {
					mask = u.X
				}
				id, ok := mask.(*ast.Ident)
				if !ok || id.Obj == nil {
					t.Errorf("%s: d.once with a mask that is not a variable", fset.Position(call.Pos()))
					return true
				}
				owner := fn.Name.Name + "." + id.Name + "@" + fset.Position(id.Obj.Pos()).String()
				if s, ok := shared[fn.Name.Name]; ok {
					owner = s
				} else if id.Obj.Kind == ast.Var && fn.Name.Name == "command" && id.Name == "seen" {
					owner = "command"
				}
				if bits[owner] == nil {
					bits[owner] = map[int64]string{}
				}
				calls++
				at := fset.Position(call.Pos()).String()
				if prev, dup := bits[owner][bit]; dup {
					t.Errorf("%s: bit %d of %s is already claimed at %s", at, bit, owner, prev)
				}
				bits[owner][bit] = at
				return true
			})
		}
	}
	if calls < 100 {
		t.Fatalf("found %d d.once calls; the walk misses the decoders", calls)
	}
}
