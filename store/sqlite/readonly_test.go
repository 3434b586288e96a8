//go:build unix

package sqlite_test

import (
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

// journalWithARun writes a database with one run, owned, and closes it.
func journalWithARun(t *testing.T) string {
	t.Helper()
	path := dbPath(t)
	s, err := sqlite.Open(path)
	require.NoError(t, err)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r", Plan: []byte(`{"tasks": [{"id": "a"}]}`), Mission: "m"}))
	require.NoError(t, s.CommitTask(ctx, "r", store.Task{ID: "a", Status: "done", Output: []byte(`1`)}))
	require.NoError(t, s.AppendEvents(ctx, "r", []store.Event{
		{Kind: "run_started", Time: time.Unix(1, 0)},
		{Kind: "task_finished", TaskID: "a", Time: time.Unix(2, 0), Data: []byte(`{"attempt":1}`)},
	}))
	require.NoError(t, s.Acquire(ctx, "r", store.Owner{ID: "o", PID: 1, Host: "h"}, nil))
	require.NoError(t, s.Close())
	return path
}

func openReadOnly(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(path, sqlite.ReadOnly())
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

// A reader never writes: it reads the runs and refuses every write.
func TestReadOnlyNeverWrites(t *testing.T) {
	path := journalWithARun(t)
	before := sum(t, path)
	s := openReadOnly(t, path)
	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.NotNil(t, list[0].Owner)
	assert.Equal(t, "o", list[0].Owner.ID)
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, "done", rec.Tasks["a"].Status)

	for name, err := range map[string]error{
		"create":    s.CreateRun(ctx, store.Run{ID: "x"}),
		"commit":    s.CommitTask(ctx, "r", store.Task{ID: "b", Status: "done"}),
		"status":    s.SetStatus(ctx, "r", "failed", ""),
		"acquire":   s.Acquire(ctx, "r", store.Owner{ID: "p"}, func(store.Owner) bool { return true }),
		"heartbeat": s.Heartbeat(ctx, "r", store.Owner{ID: "o"}),
		"release":   s.Release(ctx, "r", store.Owner{ID: "o"}),
	} {
		assert.ErrorIs(t, err, store.ErrReadOnly, name)
	}
	assert.Equal(t, before, sum(t, path), "the file is unchanged")
}

// A reader reads beside a writer that holds the write lock, without
// waiting for it.
func TestReadOnlyBesideAWriter(t *testing.T) {
	path := journalWithARun(t)
	w := raw(t, path)
	w.SetMaxOpenConns(1)
	tx, err := w.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`UPDATE runs SET mission = 'being written' WHERE id = 'r'`)
	require.NoError(t, err, "the writer holds the write lock")
	defer tx.Rollback()

	start := time.Now()
	s, err := sqlite.Open(path, sqlite.ReadOnly(), sqlite.WithBusyTimeout(5*time.Second))
	require.NoError(t, err)
	defer s.Close()
	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "m", list[0].Mission, "the last committed state")
	_, err = s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Less(t, time.Since(start), time.Second, "no wait for the write lock")

	_, err = sqlite.Open(path, sqlite.WithBusyTimeout(100*time.Millisecond))
	assert.Error(t, err, "a writer's open, which migrates, does wait for it")
}

// A read-only copy of a journal — file and directory not writable — can
// be read, and nothing is written beside it. The reader runs as another
// user when the test runs as root, whom permissions do not stop.
func TestReadOnlyCopy(t *testing.T) {
	path := journalWithARun(t)
	dir, err := os.MkdirTemp("", "dagent-ro-copy-")
	require.NoError(t, err)
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.RemoveAll(dir) })
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	cp := filepath.Join(dir, "dagent.db")
	require.NoError(t, os.WriteFile(cp, b, 0o444))
	before := sum(t, cp)

	if os.Getuid() != 0 {
		require.NoError(t, os.Chmod(dir, 0o555))
		readCopy(t, cp)
		return
	}
	// The test binary, where the other user can run it.
	bin := filepath.Join(dir, "store.test")
	exe, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, exe, 0o755))
	require.NoError(t, os.Chmod(dir, 0o555))
	cmd := exec.Command(bin, "-test.run=^TestReadOnlyCopyReader$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAGENT_STORE_RO_COPY="+cp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "--- PASS: TestReadOnlyCopyReader", "%s", out)
	assert.Equal(t, before, sum(t, cp))
}

// TestReadOnlyCopyReader is TestReadOnlyCopy's reader, as another user.
func TestReadOnlyCopyReader(t *testing.T) {
	cp := os.Getenv("DAGENT_STORE_RO_COPY")
	if cp == "" {
		t.Skip("run by TestReadOnlyCopy")
	}
	readCopy(t, cp)
}

func readCopy(t *testing.T, cp string) {
	s := openReadOnly(t, cp)
	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, "done", rec.Tasks["a"].Status)
	entries, err := os.ReadDir(filepath.Dir(cp))
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), "-wal", "nothing written beside the copy")
		assert.NotContains(t, e.Name(), "-shm", "nothing written beside the copy")
	}
}

// toSchema4 turns the journal at path back into schema 4: its events in
// the table of one row per event.
func toSchema4(t *testing.T, path string) {
	t.Helper()
	db := raw(t, path)
	for _, stmt := range []string{
		`CREATE TABLE events (
			run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			seq     INTEGER NOT NULL,
			kind    TEXT NOT NULL,
			time    INTEGER NOT NULL,
			task_id TEXT NOT NULL DEFAULT '',
			data    TEXT,
			PRIMARY KEY (run_id, seq)
		) WITHOUT ROWID`,
		`INSERT INTO events (run_id, seq, kind, time, task_id, data)
			SELECT c.run_id, c.seq + e.key, e.value ->> 'kind', e.value ->> 'time', COALESCE(e.value ->> 'task_id', ''), e.value -> 'data'
			FROM event_chunks c, json_each(c.events) e`,
		`DROP TABLE event_chunks`,
		`DELETE FROM schema_version WHERE version > 4`,
	} {
		_, err := db.Exec(stmt)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())
}

// A reader reads the schema it finds when it can: an older schema as it
// is, without migrating it; one too old, or too new, is refused.
func TestReadOnlySchemas(t *testing.T) {
	t.Run("version 4, read as it is", func(t *testing.T) {
		path := journalWithARun(t)
		want := openReadOnly(t, path)
		wantRec, err := want.Load(ctx, "r")
		require.NoError(t, err)
		toSchema4(t, path)

		s := openReadOnly(t, path)
		rec, err := s.Load(ctx, "r")
		require.NoError(t, err)
		assert.Equal(t, kinds(wantRec.Events), kinds(rec.Events))
		assertSameEvents(t, wantRec.Events, rec.Events)
		var v int
		require.NoError(t, raw(t, path).QueryRow(`SELECT MAX(version) FROM schema_version`).Scan(&v))
		assert.Equal(t, 4, v, "not migrated")
	})
	t.Run("version 2, read as it is", func(t *testing.T) {
		path := journalWithARun(t)
		toSchema4(t, path)
		db := raw(t, path)
		_, err := db.Exec(`DROP TABLE leases`)
		require.NoError(t, err)
		_, err = db.Exec(`DELETE FROM schema_version WHERE version > 2`)
		require.NoError(t, err)
		require.NoError(t, db.Close())

		s := openReadOnly(t, path)
		list, err := s.List(ctx)
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Nil(t, list[0].Owner)
		rec, err := s.Load(ctx, "r")
		require.NoError(t, err)
		assert.Nil(t, rec.Owner)
		var v int
		require.NoError(t, raw(t, path).QueryRow(`SELECT MAX(version) FROM schema_version`).Scan(&v))
		assert.Equal(t, 2, v, "not migrated")
	})
	t.Run("version 3, read as it is", func(t *testing.T) {
		path := journalWithARun(t)
		toSchema4(t, path)
		db := raw(t, path)
		_, err := db.Exec(`DROP TABLE processes`)
		require.NoError(t, err)
		_, err = db.Exec(`DELETE FROM schema_version WHERE version > 3`)
		require.NoError(t, err)
		require.NoError(t, db.Close())

		s := openReadOnly(t, path)
		rec, err := s.Load(ctx, "r")
		require.NoError(t, err)
		assert.Empty(t, rec.Processes)
		assert.Equal(t, "o", rec.Owner.ID)
		assert.ErrorIs(t, s.RecordProcess(ctx, "r", store.Process{TaskID: "a", PGID: 1}), store.ErrReadOnly)
		assert.ErrorIs(t, s.ForgetProcesses(ctx, "r"), store.ErrReadOnly)
	})
	t.Run("version 1, too old", func(t *testing.T) {
		path := copyV1(t)
		_, err := sqlite.Open(path, sqlite.ReadOnly())
		require.ErrorIs(t, err, sqlite.ErrSchemaTooOld)
		assert.Contains(t, err.Error(), "open it once to write")
	})
	t.Run("newer", func(t *testing.T) {
		path := journalWithARun(t)
		_, err := raw(t, path).Exec(`INSERT INTO schema_version (version, applied) VALUES (?, 0)`, sqlite.SchemaVersion+1)
		require.NoError(t, err)
		_, err = sqlite.Open(path, sqlite.ReadOnly())
		assert.ErrorIs(t, err, sqlite.ErrSchemaTooNew)
	})
	t.Run("no file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "none", "dagent.db")
		_, err := sqlite.Open(path, sqlite.ReadOnly())
		assert.ErrorIs(t, err, os.ErrNotExist)
		assert.NoDirExists(t, filepath.Dir(path), "nothing created")
	})
}
