package sqlite_test

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
	"github.com/dagent-dev/dagent/store/sqlite"
	"github.com/dagent-dev/dagent/store/storetest"
)

var ctx = context.Background()

// paths gives each test its database, the same for every open of the test.
var paths sync.Map // *testing.T → string

func dbPath(t *testing.T) string {
	p, _ := paths.LoadOrStore(t, filepath.Join(t.TempDir(), "dagent.db"))
	return p.(string)
}

func open(t *testing.T, opts ...sqlite.Option) *sqlite.Store {
	t.Helper()
	path := dbPath(t)
	s, err := sqlite.Open(path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// checkIntegrity opens the test's database at the end of the test and
// runs SQLite's integrity check.
func checkIntegrity(t *testing.T) {
	path := dbPath(t)
	t.Cleanup(func() { // runs after the stores' cleanups: they close first
		s, err := sqlite.Open(path)
		require.NoError(t, err)
		defer s.Close()
		assert.NoError(t, s.Check(ctx))
	})
}

// createRun creates a run of one task, a.
func createRun(t *testing.T, s store.Store, id string) {
	t.Helper()
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: id, Plan: json.RawMessage(`{"tasks":[{"id":"a","agent":"go","input":"x"}]}`), Mission: "test"}))
}

// kinds is the kind and task of each event.
func kinds(events []store.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Kind+":"+e.TaskID)
	}
	return out
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
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, sqlite.WithFullSync()) })
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
	assert.Equal(t, sqlite.SchemaVersion, v)
	var tables []string
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	require.NoError(t, err)
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		tables = append(tables, n)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"event_chunks", "exchanges", "leases", "plan_cache", "plans", "processes", "runs", "schema_version", "tasks"}, tables)
	var mode string
	require.NoError(t, db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	assert.Equal(t, "wal", mode)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
}

func TestOpenCreatesTheDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a dir", "with #odd? chars%", "dagent.db")
	s, err := sqlite.Open(path)
	require.NoError(t, err)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
	require.NoError(t, s.Close())
	assert.FileExists(t, path)
	s, err = sqlite.Open(path)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Load(ctx, "r")
	assert.NoError(t, err)
}

func TestOpenMigratesOnce(t *testing.T) {
	path := dbPath(t)
	for range 3 {
		s, err := sqlite.Open(path)
		require.NoError(t, err)
		require.NoError(t, s.Close())
	}
	var n int
	require.NoError(t, raw(t, path).QueryRow(`SELECT COUNT(*) FROM schema_version`).Scan(&n))
	assert.Equal(t, sqlite.SchemaVersion, n)
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	path := dbPath(t)
	s, err := sqlite.Open(path)
	require.NoError(t, err)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
	require.NoError(t, s.Close())
	_, err = raw(t, path).Exec(`INSERT INTO schema_version (version, applied) VALUES (?, 0)`, sqlite.SchemaVersion+1)
	require.NoError(t, err)

	_, err = sqlite.Open(path)
	require.ErrorIs(t, err, sqlite.ErrSchemaTooNew)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), fmt.Sprintf("schema version %d", sqlite.SchemaVersion+1))
	assert.Contains(t, err.Error(), "newer dagent")
}

func TestOpenRefusesWhatIsNotADatabase(t *testing.T) {
	path := dbPath(t)
	require.NoError(t, os.WriteFile(path, []byte("this is not a database, it is a text file that is long enough to have a header"), 0o644))
	_, err := sqlite.Open(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
	assert.NotErrorIs(t, err, sqlite.ErrSchemaTooNew)
}

func TestCloseTwice(t *testing.T) {
	s, err := sqlite.Open(dbPath(t))
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
	b, err := sqlite.Open(path)
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, a.CreateRun(ctx, store.Run{ID: "shared"}))
	require.NoError(t, b.CreateRun(ctx, store.Run{ID: "b-only"}))
	const writers, tasks = 4, 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*tasks*3)
	for k, s := range []*sqlite.Store{a, b} {
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
	for _, s := range []*sqlite.Store{a, b} {
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
	s, err := sqlite.Open(path)
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
		require.Less(t, time.Since(start), sqlite.DefaultBusyTimeout, "a write waited past the busy timeout")
	}
	require.NoError(t, s.SetStatus(ctx, own, "completed", ""))
}

// A write waits for another process's write up to the busy timeout, then
// fails; within it, it succeeds.
func TestBusyTimeout(t *testing.T) {
	path := dbPath(t)
	s := open(t, sqlite.WithBusyTimeout(300*time.Millisecond))
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
	s := open(t, sqlite.WithBusyTimeout(100*time.Millisecond))
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
	_, err = db.Exec(`INSERT INTO tasks (run_id, task_id, version, status, attempts, duration, prompt_tokens, completion_tokens, committed) VALUES ('ghost', 'a', 0, 'done', 1, 0, 0, 0, 0)`)
	assert.ErrorContains(t, err, "FOREIGN KEY", "a task of no run is refused")
	_, err = db.Exec(`INSERT INTO plans (run_id, version, plan, plan_hash, total, committed) VALUES ('ghost', 0, '{}', '', 0, 0)`)
	assert.ErrorContains(t, err, "FOREIGN KEY", "a plan of no run is refused")
}

func TestCheckFindsCorruption(t *testing.T) {
	path := dbPath(t)
	s, err := sqlite.Open(path)
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
	s, err = sqlite.Open(path)
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
				s, err := sqlite.Open(path)
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
		assert.Equal(t, sqlite.SchemaVersion, n)
	}
}

// copyV1 copies testdata/v1.db, a database written by the dagent of schema
// version 1, to the test's database path. It holds three runs: "release"
// (a journaled run waiting at a review: draft done, review waiting, its
// events and one LLM exchange, with options), "broken" (a done, b failed,
// status failed) and "bare" (nothing).
func copyV1(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "v1.db"))
	require.NoError(t, err)
	path := dbPath(t)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	var v int
	require.NoError(t, raw(t, path).QueryRow(`SELECT MAX(version) FROM schema_version`).Scan(&v))
	require.Equal(t, 1, v, "the fixture is of schema version 1")
	return path
}

// A database of schema version 1 opens, is migrated, and keeps every run,
// task (as its state in plan version 0), event and exchange.
func TestOpenMigratesVersion1(t *testing.T) {
	checkIntegrity(t)
	path := copyV1(t)
	before := eventRows(t, raw(t, path), "release")
	s := open(t)
	var versions []int
	rows, err := raw(t, path).Query(`SELECT version FROM schema_version ORDER BY version`)
	require.NoError(t, err)
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		versions = append(versions, v)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6, 7}, versions)

	list, err := s.List(ctx)
	require.NoError(t, err)
	type line struct {
		ID, Status, PlanHash string
		Done, Total          int
	}
	var lines []line
	for _, sm := range list {
		lines = append(lines, line{sm.ID, sm.Status, sm.PlanHash, sm.Done, sm.Total})
	}
	assert.Equal(t, []line{
		{"bare", "running", "e3b0c44298fc", 0, 0},
		{"broken", "failed", "05d758e59a1c", 1, 2},
		{"release", "waiting", "ab2d42e8b836", 1, 3},
	}, lines)

	rec, err := s.Load(ctx, "release")
	require.NoError(t, err)
	assert.JSONEq(t, `{"registry":"agents.yaml","concurrency":4}`, string(rec.Spec), "the options are the spec")
	assert.Equal(t, "Release", rec.Mission)
	assert.Contains(t, string(rec.Plan), `"publish"`)
	assert.Empty(t, rec.Plans)
	require.Len(t, rec.Commits, 2)
	assert.Equal(t, []string{"draft", "review"}, []string{rec.Commits[0].ID, rec.Commits[1].ID})
	for _, c := range rec.Commits {
		assert.Equal(t, 0, c.Version)
		assert.Equal(t, c, rec.Tasks[c.ID])
	}
	assert.JSONEq(t, `{"text":"done: Draft the release notes"}`, string(rec.Tasks["draft"].Output))
	assert.Equal(t, "waiting", rec.Tasks["review"].Status)
	assert.Equal(t, []string{"run_started:", "phase_started:", "task_started:draft", "task_finished:draft",
		"phase_finished:", "phase_started:", "task_started:review", "task_waiting:review", "phase_finished:", "run_finished:"},
		kinds(rec.Events))
	for i, e := range rec.Events {
		assert.Equal(t, i+1, e.Seq)
	}
	assertSameEvents(t, before, rec.Events)
	require.Len(t, rec.Exchanges, 1)
	assert.Contains(t, string(rec.Exchanges[0].Exchange), "Paris.")
	outputs, waiting, err := store.Resume(rec)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"draft": map[string]any{"text": "done: Draft the release notes"}}, outputs)
	assert.Equal(t, []string{"review"}, waiting)

	broken, err := s.Load(ctx, "broken")
	require.NoError(t, err)
	assert.Nil(t, broken.Spec)
	assert.Equal(t, "task b: exit status 1", broken.Error)
	created := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
	want := []store.Task{
		{ID: "a", Status: "done", Attempts: 1, Output: json.RawMessage(`"ok"`), Started: created.Add(time.Second),
			Duration: 1500 * time.Millisecond, Tokens: store.Usage{Prompt: 10, Completion: 5}, Committed: created.Add(2 * time.Second)},
		{ID: "b", Status: "failed", Attempts: 3, Error: "exit status 1", Diagnosis: "the command failed", Committed: created.Add(3 * time.Second)},
	}
	require.Len(t, broken.Commits, len(want))
	for i, w := range want {
		got := broken.Commits[i]
		assert.True(t, w.Started.Equal(got.Started) && w.Committed.Equal(got.Committed), "times of %s", w.ID)
		w.Started, w.Committed = got.Started, got.Committed
		assert.Equal(t, w, got)
	}

	// The migrated run goes on as any other.
	require.NoError(t, s.CommitPlan(ctx, "release", store.PlanVersion{Version: 0, Plan: rec.Plan}))
	require.NoError(t, s.CommitTask(ctx, "release", store.Task{ID: "review", Version: 0, Status: "done"}))
	require.NoError(t, s.CommitTask(ctx, "release", store.Task{ID: "publish", Version: 0, Status: "done", Output: json.RawMessage(`"out"`)}))
	require.NoError(t, s.AppendEvents(ctx, "release", []store.Event{{Kind: "run_started"}, {Kind: "task_started", TaskID: "publish"}}))
	rec, err = s.Load(ctx, "release")
	require.NoError(t, err)
	assert.Len(t, rec.Plans, 1)
	assert.Len(t, rec.Commits, 3)
	require.Len(t, rec.Events, len(before)+2)
	assert.Equal(t, len(before)+2, rec.Events[len(before)+1].Seq, "the timeline goes on from the migrated events")
}

// The migration is one transaction: when it fails, the database is left as
// it was, of schema version 1.
func TestFailedMigrationChangesNothing(t *testing.T) {
	path := copyV1(t)
	db := raw(t, path)
	_, err := db.Exec(`CREATE TABLE plans (x)`) // in the way of migration 2
	require.NoError(t, err)

	_, err = sqlite.Open(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "migration 2")

	var v, n int
	require.NoError(t, db.QueryRow(`SELECT MAX(version) FROM schema_version`).Scan(&v))
	assert.Equal(t, 1, v)
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM tasks`).Scan(&n))
	assert.Equal(t, 4, n)
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM runs WHERE options IS NOT NULL`).Scan(&n), "the options column is still there")
	assert.Equal(t, 1, n)
	_, err = db.Exec(`SELECT version FROM tasks`)
	assert.Error(t, err, "tasks has no version column")
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = 'tasks_v2'`).Scan(&n))
	assert.Zero(t, n)

	_, err = db.Exec(`DROP TABLE plans`)
	require.NoError(t, err)
	s := open(t)
	rec, err := s.Load(ctx, "release")
	require.NoError(t, err, "once out of the way, the migration goes through")
	assert.Len(t, rec.Commits, 2)
}

// eventRows reads a run's events from the table of schema 4 and older, one
// row per event.
func eventRows(t *testing.T, db *sql.DB, runID string) []store.Event {
	t.Helper()
	rows, err := db.Query(`SELECT seq, kind, time, task_id, data FROM events WHERE run_id = ? ORDER BY seq`, runID)
	require.NoError(t, err)
	defer rows.Close()
	var out []store.Event
	for rows.Next() {
		var e store.Event
		var at int64
		var data sql.NullString
		require.NoError(t, rows.Scan(&e.Seq, &e.Kind, &at, &e.TaskID, &data))
		e.Time = time.Unix(0, at)
		if data.Valid {
			e.Data = json.RawMessage(data.String)
		}
		out = append(out, e)
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, out)
	return out
}

// assertSameEvents checks that got holds the events of want, data equal
// as JSON.
func assertSameEvents(t *testing.T, want, got []store.Event) {
	t.Helper()
	require.Len(t, got, len(want))
	for i, w := range want {
		g := got[i]
		assert.Equal(t, w.Seq, g.Seq)
		assert.Equal(t, w.Kind, g.Kind)
		assert.Equal(t, w.TaskID, g.TaskID)
		assert.True(t, w.Time.Equal(g.Time), "event %d: time %s, want %s", w.Seq, g.Time, w.Time)
		if w.Data == nil {
			assert.Nil(t, g.Data, "event %d", w.Seq)
		} else {
			assert.JSONEq(t, string(w.Data), string(g.Data), "event %d", w.Seq)
		}
	}
}

// A run created with a plan keeps it once, as its plan version 0: its row
// in runs has none, so that a change of status does not rewrite it. A run
// journaled before, whose row has its plan, reads as it did.
func TestPlanIsKeptOnce(t *testing.T) {
	path := dbPath(t)
	s := open(t)
	p := json.RawMessage(`{"tasks":[{"id":"a"},{"id":"b"}]}`)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "new", Plan: p}))
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "mission", Mission: "m"}))
	require.NoError(t, s.CommitPlan(ctx, "mission", store.PlanVersion{Plan: p}))
	// As a dagent that kept the plan in the run's row wrote it, version 0
	// committed apart.
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "old"}))
	db := raw(t, path)
	_, err := db.Exec(`UPDATE runs SET plan = ?, plan_hash = 'oldhash', total = 2 WHERE id = 'old'`, string(p))
	require.NoError(t, err)
	var plans, inRow int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM plans WHERE run_id = 'new'`).Scan(&plans))
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM runs WHERE id = 'new' AND plan IS NOT NULL`).Scan(&inRow))
	assert.Equal(t, []int{1, 0}, []int{plans, inRow}, "the plan is in version 0, not in the run's row")

	for _, tc := range []struct {
		id       string
		plan     json.RawMessage
		versions int
	}{
		{"new", p, 1},
		{"mission", nil, 1}, // it started from its mission
		{"old", p, 0},
	} {
		rec, err := s.Load(ctx, tc.id)
		require.NoError(t, err)
		if tc.plan == nil {
			assert.Nil(t, rec.Plan, tc.id)
		} else {
			assert.JSONEq(t, string(tc.plan), string(rec.Plan), tc.id)
		}
		assert.Len(t, rec.Plans, tc.versions, tc.id)
		assert.JSONEq(t, string(p), string(rec.LatestPlan()), tc.id)
	}
	list, err := s.List(ctx)
	require.NoError(t, err)
	for _, sm := range list {
		assert.Equal(t, 2, sm.Total, sm.ID)
	}
}
