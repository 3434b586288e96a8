package executor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplanningIsPure holds the files of the Replanning to what a
// deterministic driver, such as a workflow, may run: no goroutine,
// channel, select, lock, clock or randomness.
func TestReplanningIsPure(t *testing.T) {
	banned := map[string]bool{"sync": true, "context": true, "math/rand": true, "math/rand/v2": true, "crypto/rand": true, "os": true}
	clock := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true, "AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true}
	for _, name := range []string{"replanning.go", "replanning_rounds.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			assert.False(t, banned[path], "%s imports %s", name, path)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s starts a goroutine", name)
			case *ast.SelectStmt:
				t.Errorf("%s selects", name)
			case *ast.ChanType:
				t.Errorf("%s has a channel", name)
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "time" && clock[n.Sel.Name] {
					t.Errorf("%s reads the clock: time.%s", name, n.Sel.Name)
				}
			}
			return true
		})
	}
}
