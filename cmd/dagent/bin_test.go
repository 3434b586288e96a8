package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// built is the dagent binary the tests that run it as a process share:
// built once per test binary, into the directory TestMain removes.
var built = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(testDir, "bin", "dagent")
	// Without VCS stamping, whatever the machine's go env says: the docs
	// show the version of a development build, "devel", not the
	// pseudo-version of the checkout's commit.
	out, err := exec.Command("go", "build", "-buildvcs=false", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w: %s", err, out)
	}
	return bin, nil
})

// binary returns the dagent binary, built once for the tests that run it
// as a process; without a go command they are skipped.
func binary(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build dagent with")
	}
	bin, err := built()
	require.NoError(t, err)
	return bin
}
