// Package purity checks that Go files hold only code that does the same
// on every run: code a durable workflow replays. It is for tests.
package purity

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// always are the imports no deterministic code may use: locks, and
// randomness.
var always = []string{"sync", "math/rand", "math/rand/v2", "crypto/rand"}

// clock are the functions of package time that read or wait on the clock.
var clock = map[string]bool{"Now": true, "Since": true, "Until": true, "After": true, "AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true, "Sleep": true}

// Check fails t, naming the file and position, for every go statement,
// select, channel type, send or receive, import of sync or of a source of
// randomness or of one of banned, and use of the clock (time.Now, Since,
// Until, After, AfterFunc, NewTimer, NewTicker, Tick, Sleep, under
// whatever name time is imported) in files, paths relative to the test's
// package directory. sync/atomic stays allowed: an atomic flag read
// behaves the same under a single-threaded driver.
func Check(t testing.TB, files []string, banned ...string) {
	t.Helper()
	ban := make(map[string]bool, len(always)+len(banned))
	for _, p := range append(append([]string(nil), always...), banned...) {
		ban[p] = true
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		timeName := ""
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatalf("%s: import %s: %v", fset.Position(imp.Pos()), imp.Path.Value, err)
			}
			if ban[path] {
				t.Errorf("%s: imports %s", fset.Position(imp.Pos()), path)
			}
			if path == "time" {
				timeName = "time"
				if imp.Name != nil {
					timeName = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: go statement", fset.Position(n.Pos()))
			case *ast.SelectStmt:
				t.Errorf("%s: select", fset.Position(n.Pos()))
			case *ast.ChanType:
				t.Errorf("%s: channel type", fset.Position(n.Pos()))
			case *ast.SendStmt:
				t.Errorf("%s: channel send", fset.Position(n.Pos()))
			case *ast.UnaryExpr:
				if n.Op == token.ARROW {
					t.Errorf("%s: channel receive", fset.Position(n.Pos()))
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && timeName != "" && x.Name == timeName && clock[n.Sel.Name] {
					t.Errorf("%s: time.%s reads or waits on the clock", fset.Position(n.Pos()), n.Sel.Name)
				}
			}
			return true
		})
	}
}
