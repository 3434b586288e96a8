package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPreCommitHook runs the repository's .pre-commit-hooks.yaml with
// pre-commit (Debian's package: apt-get install pre-commit) against a
// scratch repository: the hook builds dagent from this checkout, skips JSON
// that is not a plan and fails on a plan with a critical issue.
func TestPreCommitHook(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dagent inside pre-commit; not in -short mode")
	}
	for _, tool := range []string{"pre-commit", "git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (apt-get install pre-commit git): the .pre-commit-hooks.yaml test needs it", tool)
		}
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	goEnv, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE").Output()
	require.NoError(t, err)
	caches := strings.Fields(string(goEnv))
	require.Len(t, caches, 2)

	dir := tree(t, map[string]string{
		"good.json":    `{"tasks": [{"id": "a", "input": "List the files of the repository"}]}`,
		"package.json": `{"name": "web", "version": "1.0.0"}`,
	})
	env := append(os.Environ(),
		"PRE_COMMIT_HOME="+t.TempDir(),
		// pre-commit gives the build its own GOPATH; the caches are the
		// ones this test's go already filled.
		"GOMODCACHE="+caches[0], "GOCACHE="+caches[1], "GOFLAGS=-mod=mod",
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
	)
	sh := func(name string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "."}, {"commit", "-qm", "plans"}} {
		out, err := sh("git", args...)
		require.NoError(t, err, out)
	}
	hook := func() (string, error) {
		return sh("pre-commit", "try-repo", root, "dagent-lint", "--all-files")
	}

	out, err := hook()
	require.NoError(t, err, out)
	assert.Regexp(t, `dagent lint\.+Passed`, out, "a good plan beside a package.json passes")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"tasks": [{"id": "a", "input": "x", "depends_on": ["a"]}]}`), 0o600))
	out, err = sh("git", "add", "bad.json")
	require.NoError(t, err, out)
	out, err = hook()
	require.Error(t, err, out)
	assert.Regexp(t, `dagent lint\.+Failed`, out)
	assert.Contains(t, out, "critical  self_dependency")
	assert.NotContains(t, out, "package.json", "JSON that is not a plan is skipped")
}
