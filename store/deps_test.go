package store_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Whatever needs only the interface — the journal, a program with a store
// of its own, a server — imports the package without a database: the
// embedded one is package store/sqlite.
func TestDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	require.NoError(t, err)
	pkgs := strings.Fields(string(out))
	require.Contains(t, pkgs, "github.com/dagent-dev/dagent/store", "go list ran on the package")
	for _, pkg := range pkgs {
		for _, banned := range []string{"modernc.org/", "database/sql"} {
			assert.NotContains(t, pkg, banned)
		}
	}
}
