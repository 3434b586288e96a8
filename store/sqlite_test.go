package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/storetest"
)

var ctx = context.Background()

// paths gives each test its database, the same for every open of the test.
var paths sync.Map // *testing.T → string

func dbPath(t *testing.T) string {
	p, _ := paths.LoadOrStore(t, filepath.Join(t.TempDir(), "dagent.db"))
	return p.(string)
}

func open(t *testing.T, opts ...store.Option) *store.SQLite {
	t.Helper()
	path := dbPath(t)
	s, err := store.Open(path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// checkIntegrity opens the test's database at the end of the test and
// runs SQLite's integrity check.
func checkIntegrity(t *testing.T) {
	path := dbPath(t)
	t.Cleanup(func() { // runs after the stores' cleanups: they close first
		s, err := store.Open(path)
		require.NoError(t, err)
		defer s.Close()
		assert.NoError(t, s.Check(ctx))
	})
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		if _, ok := paths.Load(t); !ok {
			checkIntegrity(t)
		}
		return open(t)
	})
}

func TestConformanceFullSync(t *testing.T) {
	if testing.Short() {
		t.Skip("the kit against synchronous=FULL")
	}
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, store.WithFullSync()) })
}

// raw opens the database file with the driver alone, as a person with the
// sqlite3 shell would.
func raw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenMigratesAnEmptyFile(t *testing.T) {
	path := dbPath(t)
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	s := open(t)
	db := raw(t, path)
	var v int
	require.NoError(t, db.QueryRow(`SELECT MAX(version) FROM schema_version`).Scan(&v))
	assert.Equal(t, store.SchemaVersion, v)
	var tables []string
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	require.NoError(t, err)
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		tables = append(tables, n)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"events", "exchanges", "runs", "schema_version", "tasks"}, tables)
	var mode string
	require.NoError(t, db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	assert.Equal(t, "wal", mode)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
}

func TestOpenCreatesTheDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a dir", "with #odd? chars%", "dagent.db")
	s, err := store.Open(path)
	require.NoError(t, err)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
	require.NoError(t, s.Close())
	assert.FileExists(t, path)
	s, err = store.Open(path)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Load(ctx, "r")
	assert.NoError(t, err)
}

func TestOpenMigratesOnce(t *testing.T) {
	path := dbPath(t)
	for range 3 {
		s, err := store.Open(path)
		require.NoError(t, err)
		require.NoError(t, s.Close())
	}
	var n int
	require.NoError(t, raw(t, path).QueryRow(`SELECT COUNT(*) FROM schema_version`).Scan(&n))
	assert.Equal(t, store.SchemaVersion, n)
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	path := dbPath(t)
	s, err := store.Open(path)
	require.NoError(t, err)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
	require.NoError(t, s.Close())
	_, err = raw(t, path).Exec(`INSERT INTO schema_version (version, applied) VALUES (?, 0)`, store.SchemaVersion+1)
	require.NoError(t, err)

	_, err = store.Open(path)
	require.ErrorIs(t, err, store.ErrSchemaTooNew)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), fmt.Sprintf("schema version %d", store.SchemaVersion+1))
	assert.Contains(t, err.Error(), "newer dagent")
}

func TestOpenRefusesWhatIsNotADatabase(t *testing.T) {
	path := dbPath(t)
	require.NoError(t, os.WriteFile(path, []byte("this is not a database, it is a text file that is long enough to have a header"), 0o644))
	_, err := store.Open(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
	assert.NotErrorIs(t, err, store.ErrSchemaTooNew)
}

func TestCloseTwice(t *testing.T) {
	s, err := store.Open(dbPath(t))
	require.NoError(t, err)
	assert.NoError(t, s.Close())
	assert.NoError(t, s.Close())
	assert.Error(t, s.CreateRun(ctx, store.Run{ID: "r"}), "a closed store refuses writes")
}

// Two stores on one file, as two processes would have, write at once.
func TestTwoHandlesWriteConcurrently(t *testing.T) {
	checkIntegrity(t)
	path := dbPath(t)
	a := open(t)
	b, err := store.Open(path)
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, a.CreateRun(ctx, store.Run{ID: "shared"}))
	require.NoError(t, b.CreateRun(ctx, store.Run{ID: "b-only"}))
	const writers, tasks = 4, 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*tasks*3)
	for k, s := range []*store.SQLite{a, b} {
		for w := range writers {
			wg.Go(func() {
				for i := range tasks {
					id := fmt.Sprintf("h%d-w%d-t%d", k, w, i)
					errs <- s.CommitTask(ctx, "shared", store.Task{ID: id, Status: "done", Attempts: 1, Output: json.RawMessage(`"` + id + `"`)})
					errs <- s.AppendEvents(ctx, "shared", []store.Event{{Kind: "task_finished", TaskID: id, Time: time.Now()}})
					errs <- s.CommitTask(ctx, "b-only", store.Task{ID: id, Status: "done"})
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, s := range []*store.SQLite{a, b} {
		rec, err := s.Load(ctx, "shared")
		require.NoError(t, err)
		assert.Len(t, rec.Tasks, 2*writers*tasks)
		require.Len(t, rec.Events, 2*writers*tasks)
		for i, e := range rec.Events {
			require.Equal(t, i+1, e.Seq)
		}
	}
	require.NoError(t, a.Check(ctx))
}

// Several processes write to one database at once: none fails, none waits
// past the busy timeout, and the database stays whole.
func TestProcessesWriteConcurrently(t *testing.T) {
	if path := os.Getenv("STORE_TEST_CHILD_DB"); path != "" {
		child(t, path, os.Getenv("STORE_TEST_CHILD_ID"))
		return
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	checkIntegrity(t)
	path := dbPath(t)
	s := open(t)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "shared"}))
	const procs = 4
	var wg sync.WaitGroup
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	for p := range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestProcessesWriteConcurrently$", "-test.count=1")
			cmd.Env = append(os.Environ(), "STORE_TEST_CHILD_DB="+path, "STORE_TEST_CHILD_ID="+strconv.Itoa(p))
			outs[p], errs[p] = cmd.CombinedOutput()
		})
	}
	// This process writes too, and reads, meanwhile.
	for i := range childTasks {
		require.NoError(t, s.CommitTask(ctx, "shared", store.Task{ID: fmt.Sprintf("parent-t%d", i), Status: "done"}))
		_, err := s.Load(ctx, "shared")
		require.NoError(t, err)
	}
	wg.Wait()
	for p := range procs {
		require.NoError(t, errs[p], "child %d:\n%s", p, outs[p])
	}
	rec, err := s.Load(ctx, "shared")
	require.NoError(t, err)
	assert.Len(t, rec.Tasks, (procs+1)*childTasks)
	assert.Len(t, rec.Events, procs*childTasks)
	for p := range procs {
		own, err := s.Load(ctx, "child-"+strconv.Itoa(p))
		require.NoError(t, err)
		assert.Len(t, own.Tasks, childTasks)
		assert.Equal(t, "completed", own.Status)
	}
}

const childTasks = 50

// child is one process of TestProcessesWriteConcurrently.
func child(t *testing.T, path, id string) {
	s, err := store.Open(path)
	require.NoError(t, err)
	defer s.Close()
	own := "child-" + id
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: own}))
	for i := range childTasks {
		task := fmt.Sprintf("c%s-t%d", id, i)
		start := time.Now()
		require.NoError(t, s.CommitTask(ctx, "shared", store.Task{ID: task, Status: "done", Output: json.RawMessage(`1`)}))
		require.NoError(t, s.AppendEvents(ctx, "shared", []store.Event{{Kind: "task_finished", TaskID: task, Time: time.Now()}}))
		require.NoError(t, s.CommitTask(ctx, own, store.Task{ID: task, Status: "done"}))
		require.Less(t, time.Since(start), store.DefaultBusyTimeout, "a write waited past the busy timeout")
	}
	require.NoError(t, s.SetStatus(ctx, own, "completed", ""))
}

// A write waits for another process's write up to the busy timeout, then
// fails; within it, it succeeds.
func TestBusyTimeout(t *testing.T) {
	path := dbPath(t)
	s := open(t, store.WithBusyTimeout(300*time.Millisecond))
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
	db := raw(t, path)
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `BEGIN IMMEDIATE`)
	require.NoError(t, err)

	start := time.Now()
	err = s.CommitTask(ctx, "r", store.Task{ID: "a", Status: "done"})
	waited := time.Since(start)
	require.Error(t, err, "the lock was held past the busy timeout")
	assert.Contains(t, err.Error(), "locked")
	assert.GreaterOrEqual(t, waited, 250*time.Millisecond)
	assert.Less(t, waited, 3*time.Second)

	go func() {
		time.Sleep(100 * time.Millisecond)
		_, _ = conn.ExecContext(ctx, `COMMIT`)
	}()
	require.NoError(t, s.CommitTask(ctx, "r", store.Task{ID: "a", Status: "done"}), "the lock was released within the busy timeout")
}

// Readers are not blocked by a writer (WAL).
func TestReadWhileAnotherWrites(t *testing.T) {
	path := dbPath(t)
	s := open(t, store.WithBusyTimeout(100*time.Millisecond))
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
	require.NoError(t, s.CommitTask(ctx, "r", store.Task{ID: "a", Status: "done"}))
	conn, err := raw(t, path).Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `BEGIN IMMEDIATE`)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, `DELETE FROM tasks`)
	require.NoError(t, err)
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Len(t, rec.Tasks, 1, "the reader sees the last committed state")
	_, err = s.List(ctx)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, `ROLLBACK`)
	require.NoError(t, err)
}

func TestForeignKeysAndCascade(t *testing.T) {
	path := dbPath(t)
	s := open(t)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
	require.NoError(t, s.CommitTask(ctx, "r", store.Task{ID: "a", Status: "done"}))
	db := raw(t, path)
	_, err := db.Exec(`PRAGMA foreign_keys = ON`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO tasks (run_id, task_id, status, attempts, duration, prompt_tokens, completion_tokens, committed) VALUES ('ghost', 'a', 'done', 1, 0, 0, 0, 0)`)
	assert.Error(t, err, "a task of no run is refused")
}

func TestCheckFindsCorruption(t *testing.T) {
	path := dbPath(t)
	s, err := store.Open(path)
	require.NoError(t, err)
	for i := range 200 {
		require.NoError(t, s.CreateRun(ctx, store.Run{ID: fmt.Sprintf("run-%03d", i), Mission: fmt.Sprintf("%0500d", i)}))
	}
	require.NoError(t, s.Check(ctx))
	require.NoError(t, s.Close())
	// Scribble over the middle of the file.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	info, err := f.Stat()
	require.NoError(t, err)
	junk := make([]byte, 8192)
	for i := range junk {
		junk[i] = byte(i * 7)
	}
	_, err = f.WriteAt(junk, info.Size()/2)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	s, err = store.Open(path)
	if err != nil {
		return // refused at open: as good
	}
	defer s.Close()
	err = s.Check(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "corrupt")
}

// Several opens of a new database at once (as processes started together
// would) all succeed, and migrate it once.
func TestOpenConcurrentlyOnANewFile(t *testing.T) {
	for round := range 5 {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("round-%d.db", round))
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for k := range errs {
			wg.Go(func() {
				s, err := store.Open(path)
				if err == nil {
					err = s.CreateRun(ctx, store.Run{ID: fmt.Sprintf("run-%d", k)})
					err = errors.Join(err, s.Close())
				}
				errs[k] = err
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		var n int
		require.NoError(t, raw(t, path).QueryRow(`SELECT COUNT(*) FROM schema_version`).Scan(&n))
		assert.Equal(t, store.SchemaVersion, n)
	}
}
