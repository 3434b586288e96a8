package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// coreFiles hold the run's deterministic core and what it calls of the
// package: a durable workflow runs their code, which must do the same on
// every replay.
var coreFiles = []string{"core.go", "coretask.go", "coreapi.go", "input.go", "request.go", "limit.go"}

// TestCorePurity fails on what would make the core's code behave
// differently from one run to the next: goroutines, channels, selects,
// locks, randomness and the clock.
func TestCorePurity(t *testing.T) {
	banned := map[string]bool{"sync": true, "math/rand": true, "math/rand/v2": true, "crypto/rand": true}
	clock := map[string]bool{"Now": true, "Since": true, "Until": true, "After": true, "AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true, "Sleep": true}
	fset := token.NewFileSet()
	for _, name := range coreFiles {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		timeName := ""
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			assert.False(t, banned[path], "%s imports %s", name, path)
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
