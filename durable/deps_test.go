package durable_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server or a command imports the package to run and inspect runs:
// it brings neither a command-line framework, nor an HTTP stack, nor a
// YAML parser, nor a database with it: the store is the caller's.
func TestDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	require.NoError(t, err)
	pkgs := strings.Fields(string(out))
	require.Contains(t, pkgs, "github.com/dagent-dev/dagent/durable", "go list ran on the package")
	for _, pkg := range pkgs {
		for _, banned := range []string{"github.com/spf13/cobra", "net/http", "yaml", "modernc.org/", "database/sql"} {
			assert.NotContains(t, pkg, banned)
		}
	}
}
