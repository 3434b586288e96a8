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
// YAML parser with it.
func TestDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/spf13/cobra", "net/http", "yaml"} {
			assert.NotContains(t, pkg, banned)
		}
	}
}
