//go:build unix

package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry/regfile"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// crashedRun journals run id of chainPlan as a crash leaves it — a done, b
// in flight — owned by o, and returns the database and the side-effect
// log.
func crashedRun(t *testing.T, id string, o *store.Owner) (db, log string) {
	t.Helper()
	dir := t.TempDir()
	reg, log := workRegistry(t, dir)
	db = filepath.Join(dir, "runs.db")
	p, err := plan.Parse([]byte(chainPlan))
	require.NoError(t, err)
	canonical, err := p.Canonical()
	require.NoError(t, err)
	s, err := sqlite.Open(db)
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	_, digest, err := regfile.LoadDigest(reg)
	require.NoError(t, err)
	spec := fmt.Appendf(nil, `{"version": 1, "plan": %s, "catalog": %q, "catalog_digest": %q}`, canonical, reg, digest)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: id, Plan: canonical, Mission: p.Mission, Spec: spec}))
	require.NoError(t, s.CommitPlan(ctx, id, store.PlanVersion{Plan: canonical}))
	require.NoError(t, s.CommitTask(ctx, id, store.Task{ID: "a", Status: "done", Attempts: 1, Output: json.RawMessage(`{"task": "a", "v": "1"}`)}))
	if o != nil {
		require.NoError(t, s.Acquire(ctx, id, *o, nil))
	}
	return db, log
}

// raw opens the database file with the driver alone.
func raw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// gonePID is the id of a process of this host that has ended.
func gonePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

// runs and show tell a run that runs — its owner is alive — from one
// whose process died.
func TestRunsTellLiveFromInterrupted(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	tests := []struct {
		name   string
		owner  *store.Owner
		status string
		live   bool
	}{
		{"a live owner", &store.Owner{ID: "o", PID: os.Getppid(), Host: host}, "running", true},
		{"a dead owner", &store.Owner{ID: "o", PID: gonePID(t), Host: host}, "interrupted", false},
		{"no owner", nil, "interrupted", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, _ := crashedRun(t, "r1", tt.owner)
			code, stdout, stderr := dagent(t, "", "runs", "--db", db)
			require.Equal(t, exitOK, code, stderr)
			assert.Regexp(t, `(?m)^r1\s+\S+ \S+ \S+\s+`+tt.status+`\s+1/3`, stdout)

			code, stdout, stderr = dagent(t, "", "runs", "--db", db, "--format", "json")
			require.Equal(t, exitOK, code, stderr)
			var list struct {
				Version int
				Runs    []map[string]any
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &list))
			assert.Equal(t, docVersion, list.Version)
			runs := list.Runs
			require.Len(t, runs, 1)
			assert.Equal(t, "running", runs[0]["status"], "the journal's status")
			assert.Equal(t, tt.live, runs[0]["live"])
			if tt.owner == nil {
				assert.Nil(t, runs[0]["owner"])
			} else {
				assert.Equal(t, float64(tt.owner.PID), runs[0]["owner"].(map[string]any)["pid"])
			}

			code, stdout, stderr = dagent(t, "", "show", "r1", "--db", db)
			require.Equal(t, exitOK, code, stderr)
			assert.Regexp(t, `^run r1  `+tt.status+`\n`, stdout)
			if tt.live {
				assert.Regexp(t, fmt.Sprintf(`(?m)^owner\s+process %d on %s`, tt.owner.PID, regexp.QuoteMeta(host)), stdout)
			} else {
				assert.Contains(t, stdout, "its process died while it ran; dagent resume r1 goes on with it")
			}
			code, stdout, stderr = dagent(t, "", "show", "r1", "--db", db, "--format", "json")
			require.Equal(t, exitOK, code, stderr)
			var doc map[string]any
			require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
			assert.Equal(t, "running", doc["status"])
			assert.Equal(t, tt.live, doc["live"])
		})
	}
}

// A resume of a run whose owner is alive is refused, naming the owner;
// --force takes it over. One whose owner died is taken over as it is.
func TestResumeRefusesALiveOwner(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	live := &store.Owner{ID: "o", PID: os.Getppid(), Host: host}
	db, log := crashedRun(t, "r1", live)
	code, stdout, stderr := dagent(t, "", "resume", "r1", "--db", db)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, fmt.Sprintf("run r1 is being run by process %d on %s", live.PID, host))
	assert.Contains(t, stderr, "dagent resume r1 --force")
	assert.Empty(t, sideEffects(t, log), "nothing ran")

	code, _, stderr = dagent(t, "", "run", filepath.Join(t.TempDir(), "none.json"), "--db", db, "--run-id", "r1")
	assert.NotEqual(t, exitOK, code, stderr)

	code, stdout, stderr = dagent(t, "", "resume", "r1", "--db", db, "--force")
	require.Equal(t, exitOK, code, stderr+stdout)
	assert.Len(t, sideEffects(t, log), 2, "b and c ran")

	db, log = crashedRun(t, "r2", &store.Owner{ID: "o", PID: gonePID(t), Host: host})
	code, stdout, stderr = dagent(t, "", "resume", "r2", "--db", db)
	require.Equal(t, exitOK, code, stderr+stdout)
	assert.Len(t, sideEffects(t, log), 2)
}

// The commands that only read — runs, show, replay — never write: they
// read beside a writer that holds the write lock, a read-only copy of a
// journal, and a journal of the previous schema without upgrading it.
func TestReadersNeverWrite(t *testing.T) {
	dir := t.TempDir()
	reg, _ := workRegistry(t, dir)
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(chainPlan), 0o600))
	db := filepath.Join(dir, "runs.db")
	code, stdout, stderr := dagent(t, "", "run", planPath, "--registry", reg, "--db", db, "--run-id", "r1")
	require.Equal(t, exitOK, code, stderr+stdout)
	readers := [][]string{{"runs"}, {"show", "r1"}, {"replay", "r1"}}
	read := func(t *testing.T, db string) {
		t.Helper()
		for _, args := range readers {
			start := time.Now()
			code, stdout, stderr := dagent(t, "", append(args, "--db", db)...)
			require.Equal(t, exitOK, code, "%v: %s", args, stderr)
			assert.Contains(t, stdout, "r1", args)
			assert.Less(t, time.Since(start), 3*time.Second, "%v waited for the write lock", args)
		}
	}

	t.Run("beside a writer", func(t *testing.T) {
		w := raw(t, db)
		w.SetMaxOpenConns(1)
		tx, err := w.Begin()
		require.NoError(t, err)
		defer tx.Rollback()
		_, err = tx.Exec(`UPDATE runs SET mission = 'being written'`)
		require.NoError(t, err)
		read(t, db)
	})
	t.Run("a read-only copy", func(t *testing.T) {
		b, err := os.ReadFile(db)
		require.NoError(t, err)
		ro := filepath.Join(t.TempDir(), "copy")
		require.NoError(t, os.Mkdir(ro, 0o755))
		cp := filepath.Join(ro, "runs.db")
		require.NoError(t, os.WriteFile(cp, b, 0o444))
		require.NoError(t, os.Chmod(ro, 0o555))
		t.Cleanup(func() { os.Chmod(ro, 0o755) })
		read(t, cp)
		after, err := os.ReadFile(cp)
		require.NoError(t, err)
		assert.Equal(t, b, after)
	})
	t.Run("the previous schema", func(t *testing.T) {
		old := filepath.Join(t.TempDir(), "old.db")
		b, err := os.ReadFile(db)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(old, b, 0o644))
		d := raw(t, old)
		for _, stmt := range []string{
			// Schema 4 kept events one per row; the timeline is not what is read here.
			`CREATE TABLE events (run_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, time INTEGER NOT NULL,
				task_id TEXT NOT NULL DEFAULT '', data TEXT, PRIMARY KEY (run_id, seq)) WITHOUT ROWID`,
			`DROP TABLE event_chunks`,
			`DELETE FROM schema_version WHERE version > 4`,
		} {
			_, err = d.Exec(stmt)
			require.NoError(t, err)
		}
		read(t, old)
		var v int
		require.NoError(t, d.QueryRow(`SELECT MAX(version) FROM schema_version`).Scan(&v))
		assert.Equal(t, 4, v, "not upgraded")
	})
}
