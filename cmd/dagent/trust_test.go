package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trustRegistries are two registries with a worker of one name: the run's
// fails until the file ok exists; the other, which the run never named,
// leaves a mark.
var trustRegistries = map[string]string{
	"registry.yaml": `workers:
  step:
    description: Fails until the file ok exists
    command: ["sh", "-c", "cat >/dev/null; test -e ok && echo '\"done\"'"]
`,
	"other.yaml": `workers:
  step:
    description: Leaves a mark
    command: ["sh", "-c", "cat >/dev/null; touch pwned; echo '\"pwned\"'"]
`,
	"plan.json": `{"tasks": [{"id": "a", "agent": "step", "input": "x"}]}`,
}

// failedRun runs the plan on registry.yaml, in dir, to a failure that a
// resume can finish, and returns its id.
func failedRun(t *testing.T, dir, db string) string {
	t.Helper()
	t.Chdir(dir)
	code, stdout, stderr := dagent(t, "", "run", "plan.json", "--registry", "registry.yaml", "--db", db)
	require.Equal(t, exitInvalid, code, stdout+stderr)
	id := regexp.MustCompile(`run (\S+)`).FindStringSubmatch(stdout)
	require.NotNil(t, id, stdout)
	return id[1]
}

// TestResumeRefusesATamperedRegistryPath edits the registry path a run's
// spec holds in the journal, as someone who can write the database would:
// resume and replay refuse the registry it names now, and never run its
// commands.
func TestResumeRefusesATamperedRegistryPath(t *testing.T) {
	dir := writeFiles(t, trustRegistries)
	db := filepath.Join(dir, "j.db")
	id := failedRun(t, dir, db)

	conn, err := sql.Open("sqlite", db)
	require.NoError(t, err)
	defer conn.Close()
	var raw string
	require.NoError(t, conn.QueryRow(`SELECT spec FROM runs WHERE id = ?`, id).Scan(&raw))
	var spec map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &spec))
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, spec["catalog_digest"], "the run recorded its registry's digest")
	spec["catalog"] = filepath.Join(dir, "other.yaml")
	tampered, err := json.Marshal(spec)
	require.NoError(t, err)
	_, err = conn.Exec(`UPDATE runs SET spec = ? WHERE id = ?`, string(tampered), id)
	require.NoError(t, err)
	require.NoError(t, conn.Close())

	code, stdout, stderr := dagent(t, "", "resume", id, "--db", db)
	assert.Equal(t, exitUsage, code, stdout+stderr)
	assert.Contains(t, stderr, "registry "+filepath.Join(dir, "other.yaml")+" changed since run "+id+" started")
	assert.Contains(t, stderr, "--registry "+filepath.Join(dir, "other.yaml"))
	code, stdout, stderr = dagent(t, "", "replay", id, "--db", db, "--rerun-workers")
	assert.Equal(t, exitUsage, code, stdout+stderr)
	assert.Contains(t, stderr, "changed since run "+id+" started")
	assert.NoFileExists(t, filepath.Join(dir, "pwned"), "the other registry's command never ran")
}

// TestResumeRefusesAnEditedRegistry edits the registry file between the
// run and its resume: the resume is refused until the user names the file
// with --registry, which is then used.
func TestResumeRefusesAnEditedRegistry(t *testing.T) {
	dir := writeFiles(t, trustRegistries)
	db := filepath.Join(dir, "j.db")
	id := failedRun(t, dir, db)
	reg := filepath.Join(dir, "registry.yaml")
	require.NoError(t, os.WriteFile(reg, []byte(trustRegistries["other.yaml"]), 0o600))

	code, stdout, stderr := dagent(t, "", "resume", id, "--db", db)
	assert.Equal(t, exitUsage, code, stdout+stderr)
	assert.Contains(t, stderr, "dagent: registry "+reg+" changed since run "+id+" started (its digest is sha256:")
	assert.Contains(t, stderr, "): if its workers are ones to trust, resume on it as it is now with --registry "+reg+"\n")
	code, stdout, stderr = dagent(t, "", "replay", id, "--db", db)
	assert.Equal(t, exitUsage, code, stdout+stderr)
	assert.Contains(t, stderr, "replay on it as it is now with --registry "+reg)
	assert.NoFileExists(t, filepath.Join(dir, "pwned"))

	code, stdout, stderr = dagent(t, "", "resume", id, "--db", db, "--registry", reg)
	assert.Equal(t, exitOK, code, stdout+stderr)
	assert.FileExists(t, filepath.Join(dir, "pwned"), "the registry the user named ran")
}

// TestResumeOnANamedRegistry: --registry names the registry a resume runs
// on, whatever the journal says; the journal's file, unchanged, needs no
// flag.
func TestResumeOnANamedRegistry(t *testing.T) {
	dir := writeFiles(t, trustRegistries)
	db := filepath.Join(dir, "j.db")
	id := failedRun(t, dir, db)

	code, stdout, stderr := dagent(t, "", "replay", id, "--db", db)
	assert.Equal(t, exitOK, code, "the registry did not change: %s", stdout+stderr)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "ok"), nil, 0o600))
	code, stdout, stderr = dagent(t, "", "resume", id, "--db", db, "--registry", "other.yaml")
	assert.Equal(t, exitOK, code, stdout+stderr)
	assert.FileExists(t, filepath.Join(dir, "pwned"), "the named registry ran, not the journal's")
}
