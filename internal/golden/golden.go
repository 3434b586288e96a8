// Package golden compares test output with golden files under testdata/.
// Run the tests with -update to rewrite the files from what the code
// produces now, then review the diff.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Updating reports whether the tests run with -update: whether files that
// hold expected output are to be rewritten rather than compared.
func Updating() bool { return *update }

// Check compares got with the file at path, or rewrites the file under
// -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run the test with -update")
	require.Equal(t, string(want), string(got), "output differs from %s; run with -update if the change is intended", path)
}
