package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"modernc.org/sqlite"
)

// ErrSchemaTooNew: the database was written by a newer dagent, whose schema
// this one does not know; it is refused rather than misread.
var ErrSchemaTooNew = errors.New("database schema is newer than this dagent knows")

// ErrSchemaTooOld: a database opened [ReadOnly] has a schema too old to be
// read as it is; opening it to write brings it up to date.
var ErrSchemaTooOld = errors.New("database schema is too old to read without upgrading it")

// DefaultBusyTimeout is how long a write waits for another process's write
// to finish before it fails.
const DefaultBusyTimeout = 5 * time.Second

// SQLite is the embedded [Store]: one SQLite file through the pure-Go driver
// modernc.org/sqlite (no cgo), in WAL mode, with foreign keys on. There is
// no useful zero SQLite: open one with [Open].
//
// Durability: each write is one transaction, committed before the method
// returns. With the default synchronous=NORMAL, WAL mode makes a committed
// transaction survive a crash of the process (SIGKILL, panic, OOM) — the
// WAL is written before the commit returns — but a power loss or an
// operating system crash may lose the last transactions (never corrupt the
// database). [WithFullSync] makes every commit wait for fsync and survive
// those too, at some cost per commit.
//
// Concurrency: in a process, writes go one at a time through one
// connection; between processes, each write takes SQLite's write lock with
// BEGIN IMMEDIATE, waiting up to the busy timeout (and retrying on
// SQLITE_BUSY until then), so several processes can share one database.
// Reads run beside writes (WAL) on their own connections and see a
// consistent snapshot.
type SQLite struct {
	path   string
	busy   time.Duration
	schema int     // the database's schema version
	w      *sql.DB // writes: one connection, BEGIN IMMEDIATE; nil when read-only
	r      *sql.DB // reads

	insertExchange, lastEvent, insertChunk, lastExchange, lastPlan, upsertPlan *sql.Stmt
	batch                                                                      batchStmts // tasks and events

	closeOnce sync.Once
	closeErr  error
}

var _ Store = (*SQLite)(nil)

// Option configures [Open].
type Option func(*options)

type options struct {
	busy     time.Duration
	full     bool
	readOnly bool
}

// WithBusyTimeout sets how long a write waits for another process's write;
// default [DefaultBusyTimeout].
func WithBusyTimeout(d time.Duration) Option {
	return func(o *options) { o.busy = d }
}

// WithFullSync makes each commit durable against power loss too
// (synchronous=FULL: an fsync of the WAL per commit).
func WithFullSync() Option {
	return func(o *options) { o.full = true }
}

// ReadOnly opens the store to read it only: the database must exist, is
// opened read-only (SQLite's mode=ro and query_only) and is never
// migrated, so that a reader takes no write lock — it reads beside a
// writer that holds it — and can read a database it may not write to, such
// as a read-only copy. A database of an older schema is read as it is when
// it can be, else refused with [ErrSchemaTooOld]; the methods that write
// fail with [ErrReadOnly].
func ReadOnly() Option {
	return func(o *options) { o.readOnly = true }
}

// Open opens the [SQLite] store at path, creating the file and its parent
// directory if need be — private to their owner, 0600 and 0700 — and
// brings its schema up to date. A database
// written by a newer dagent is refused with [ErrSchemaTooNew].
func Open(path string, opts ...Option) (*SQLite, error) {
	o := options{busy: DefaultBusyTimeout}
	for _, f := range opts {
		f(&o)
	}
	if path == "" {
		return nil, errors.New("store: open: no path given")
	}
	if o.busy < 0 {
		return nil, fmt.Errorf("store: open %s: negative busy timeout %s", path, o.busy)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if o.readOnly {
		s, err := openReadOnly(path, abs, o)
		if err != nil {
			return nil, fmt.Errorf("store: open %s: %w", path, err)
		}
		return s, nil
	}
	if err := createPrivate(abs); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	syncMode := "NORMAL"
	if o.full {
		syncMode = "FULL"
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(o.busy.Milliseconds(), 10))
	q.Set("_foreign_keys", "1")
	q.Set("_synchronous", syncMode)
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	u.RawQuery = q.Encode()
	readDSN := u.String()
	q.Set("_journal_mode", "WAL")
	q.Set("_txlock", "immediate")
	u.RawQuery = q.Encode()
	writeDSN := u.String()

	s := &SQLite{path: path, busy: o.busy}
	if s.w, err = sql.Open("sqlite", writeDSN); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxIdleTime(0)
	s.w.SetConnMaxLifetime(0)
	ctx := context.Background()
	if err := s.migrate(ctx); err != nil {
		s.w.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if s.r, err = sql.Open("sqlite", readDSN); err != nil {
		s.w.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s.r.SetMaxOpenConns(4)
	s.r.SetMaxIdleConns(2)
	if err := s.prepare(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s.schema = SchemaVersion
	return s, nil
}

// openReadOnly opens the database at abs read-only, as it is.
func openReadOnly(path, abs string, o options) (*SQLite, error) {
	if _, err := os.Stat(abs); err != nil {
		return nil, err
	}
	s := &SQLite{path: path, busy: o.busy}
	var err error
	if s.r, s.schema, err = reader(abs, o.busy, false); err == nil {
		return s, nil
	}
	// SQLite reads a database in WAL mode beside its -shm file, which it
	// creates when there is none; where it cannot (a read-only copy, a
	// read-only directory), a database without a -wal file to read, which
	// no process writes, can be read as immutable.
	if info, serr := os.Stat(abs + "-wal"); (serr == nil && info.Size() > 0) || (serr != nil && !errors.Is(serr, fs.ErrNotExist)) {
		return nil, err
	}
	var ierr error
	if s.r, s.schema, ierr = reader(abs, o.busy, true); ierr != nil {
		return nil, err
	}
	return s, nil
}

// reader opens the database at abs read-only (immutable: as a file no
// process writes) and returns its schema version.
func reader(abs string, busy time.Duration, immutable bool) (*sql.DB, int, error) {
	q := url.Values{}
	q.Set("mode", "ro")
	if immutable {
		q.Set("immutable", "1")
	}
	q.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
	q.Set("_query_only", "1")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	r, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, 0, err
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(2)
	v, err := readSchema(context.Background(), r)
	if err != nil {
		r.Close()
		return nil, 0, err
	}
	return r, v, nil
}

// oldestReadable is the oldest schema version the store reads as it is.
const oldestReadable = 2

// readSchema returns the schema version of a database it must read as it
// is: an error unless it is one the store can read.
func readSchema(ctx context.Context, db *sql.DB) (int, error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'`).Scan(&n); err != nil {
		return 0, err
	}
	v := 0
	if n > 0 {
		if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v); err != nil {
			return 0, err
		}
	}
	switch {
	case v > len(migrations):
		return 0, fmt.Errorf("%w: the database has schema version %d and this dagent knows versions up to %d; use a newer dagent, or another database file",
			ErrSchemaTooNew, v, len(migrations))
	case v < oldestReadable:
		return 0, fmt.Errorf("%w: the database has schema version %d, and is read from version %d on; open it once to write (a dagent command that journals, such as run or resume), which upgrades it",
			ErrSchemaTooOld, v, oldestReadable)
	}
	return v, nil
}

// Path is the path the store was opened with.
func (s *SQLite) Path() string { return s.path }

// migrations[k] brings the schema from version k to k+1. A migration is
// never changed once released: a change of schema is a new migration.
var migrations = [][]string{
	// 1: runs, their tasks' final states, their events and LLM exchanges.
	{
		`CREATE TABLE runs (
			id        TEXT PRIMARY KEY,
			plan      TEXT,              -- canonical plan JSON
			plan_hash TEXT NOT NULL,     -- hex sha256 of plan, 12 digits
			total     INTEGER NOT NULL,  -- tasks of the plan
			mission   TEXT NOT NULL DEFAULT '',
			options   TEXT,              -- JSON
			status    TEXT NOT NULL,
			error     TEXT NOT NULL DEFAULT '',
			created   INTEGER NOT NULL,  -- Unix nanoseconds
			updated   INTEGER NOT NULL   -- of the status; see also tasks.committed
		)`,
		`CREATE INDEX runs_by_created ON runs (created DESC, id DESC)`,
		`CREATE TABLE tasks (
			run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			task_id    TEXT NOT NULL,
			status     TEXT NOT NULL,
			attempts   INTEGER NOT NULL,
			output     TEXT,             -- JSON
			error      TEXT NOT NULL DEFAULT '',
			diagnosis  TEXT NOT NULL DEFAULT '',
			started    INTEGER,          -- Unix nanoseconds
			duration   INTEGER NOT NULL, -- nanoseconds
			prompt_tokens     INTEGER NOT NULL,
			completion_tokens INTEGER NOT NULL,
			committed  INTEGER NOT NULL,
			PRIMARY KEY (run_id, task_id)
		) WITHOUT ROWID`,
		`CREATE TABLE events (
			run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			seq     INTEGER NOT NULL,
			kind    TEXT NOT NULL,
			time    INTEGER NOT NULL,    -- Unix nanoseconds
			task_id TEXT NOT NULL DEFAULT '',
			data    TEXT,                -- JSON
			PRIMARY KEY (run_id, seq)
		) WITHOUT ROWID`,
		`CREATE TABLE exchanges (
			run_id   TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			seq      INTEGER NOT NULL,
			key      TEXT NOT NULL,      -- llm.RequestKey
			exchange TEXT NOT NULL,      -- JSON
			PRIMARY KEY (run_id, seq)
		) WITHOUT ROWID`,
		`CREATE INDEX exchanges_by_key ON exchanges (run_id, key)`,
	},
	// 2: the run's spec instead of its options, the versions of its plan,
	// and a task's state in each plan version (a state kept by schema 1 is
	// the task's state in plan version 0).
	{
		`ALTER TABLE runs RENAME COLUMN options TO spec`,
		`CREATE TABLE plans (
			run_id    TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			version   INTEGER NOT NULL,  -- 0, 1, 2, ...
			plan      TEXT NOT NULL,     -- canonical plan JSON
			trial     TEXT,              -- JSON: the repair that led to it
			plan_hash TEXT NOT NULL,     -- hex sha256 of plan, 12 digits
			total     INTEGER NOT NULL,  -- tasks of the plan
			committed INTEGER NOT NULL,  -- Unix nanoseconds
			PRIMARY KEY (run_id, version)
		) WITHOUT ROWID`,
		`CREATE TABLE tasks_v2 (
			run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			task_id    TEXT NOT NULL,
			version    INTEGER NOT NULL, -- of the plan whose execution committed it
			status     TEXT NOT NULL,
			attempts   INTEGER NOT NULL,
			output     TEXT,             -- JSON
			error      TEXT NOT NULL DEFAULT '',
			diagnosis  TEXT NOT NULL DEFAULT '',
			started    INTEGER,          -- Unix nanoseconds
			duration   INTEGER NOT NULL, -- nanoseconds
			prompt_tokens     INTEGER NOT NULL,
			completion_tokens INTEGER NOT NULL,
			committed  INTEGER NOT NULL,
			PRIMARY KEY (run_id, task_id, version)
		) WITHOUT ROWID`,
		`INSERT INTO tasks_v2 (run_id, task_id, version, status, attempts, output, error, diagnosis, started, duration, prompt_tokens, completion_tokens, committed)
			SELECT run_id, task_id, 0, status, attempts, output, error, diagnosis, started, duration, prompt_tokens, completion_tokens, committed FROM tasks`,
		`DROP TABLE tasks`,
		`ALTER TABLE tasks_v2 RENAME TO tasks`,
	},
	// 3: the lease on a run: the process that owns it.
	{
		`CREATE TABLE leases (
			run_id    TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
			owner     TEXT NOT NULL,     -- the lease's token
			pid       INTEGER NOT NULL,
			host      TEXT NOT NULL,
			started   INTEGER NOT NULL,  -- Unix nanoseconds
			heartbeat INTEGER NOT NULL   -- Unix nanoseconds
		) WITHOUT ROWID`,
	},
	// 4: the programs the run's task attempts started.
	{
		`CREATE TABLE processes (
			run_id   TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			task_id  TEXT NOT NULL,
			attempt  INTEGER NOT NULL,
			key      TEXT NOT NULL,      -- the attempt's idempotency key
			pgid     INTEGER NOT NULL,
			host     TEXT NOT NULL,
			boot_id  TEXT NOT NULL,
			start_time INTEGER NOT NULL, -- the program's start time, the system's unit
			recorded INTEGER NOT NULL    -- Unix nanoseconds
		)`,
		`CREATE INDEX processes_by_run ON processes (run_id)`,
	},
	// 5: events in chunks, a row for the events a transaction appends
	// rather than one for each: a row costs more than its encoding.
	{
		`CREATE TABLE event_chunks (
			run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
			seq    INTEGER NOT NULL,     -- of its first event
			last   INTEGER NOT NULL,     -- seq of its last event
			events TEXT NOT NULL,        -- JSON: [{"kind", "time", "task_id", "data"}, ...]
			PRIMARY KEY (run_id, seq)
		) WITHOUT ROWID`,
		`INSERT INTO event_chunks (run_id, seq, last, events)
			SELECT run_id, seq, seq, json_array(json_object('kind', kind, 'time', time, 'task_id', task_id, 'data', json(data))) FROM events`,
		`DROP TABLE events`,
	},
	// 6: a request to cancel a run, made to the owner of its lease: when
	// it was made, in Unix nanoseconds, or NULL for none. (A comment in an
	// added column's text would end the table's schema text.)
	{
		`ALTER TABLE leases ADD COLUMN cancel INTEGER`,
	},
	// 7: the plan cache: an accepted plan under a key its user derives
	// (from the mission and the catalog), so that a repeated mission needs
	// no planning call.
	{
		`CREATE TABLE plan_cache (
			key     TEXT PRIMARY KEY,
			mission TEXT NOT NULL,
			plan    TEXT NOT NULL,       -- canonical plan JSON
			run_id  TEXT NOT NULL,       -- the run that stored it
			stored  INTEGER NOT NULL     -- Unix nanoseconds
		) WITHOUT ROWID`,
	},
}

// SchemaVersion is the schema version this dagent writes.
const SchemaVersion = 7

// migrate brings the schema up to SchemaVersion in one transaction.
func (s *SQLite) migrate(ctx context.Context) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
			version INTEGER PRIMARY KEY,
			applied INTEGER NOT NULL -- Unix nanoseconds
		)`); err != nil {
			return err
		}
		var v int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v); err != nil {
			return err
		}
		if v > len(migrations) {
			return fmt.Errorf("%w: the database has schema version %d and this dagent knows versions up to %d; use a newer dagent, or another database file",
				ErrSchemaTooNew, v, len(migrations))
		}
		for ; v < len(migrations); v++ {
			for _, stmt := range migrations[v] {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("migration %d: %w", v+1, err)
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, applied) VALUES (?, ?)`, v+1, time.Now().UnixNano()); err != nil {
				return fmt.Errorf("migration %d: %w", v+1, err)
			}
		}
		return nil
	})
}

// prepare prepares the statements of the frequent writes.
func (s *SQLite) prepare(ctx context.Context) error {
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&s.insertExchange, `INSERT INTO exchanges (run_id, seq, key, exchange) VALUES (?, ?, ?, ?)`},
		{&s.lastEvent, `SELECT (SELECT 1 FROM runs WHERE id = ?1), COALESCE((SELECT last FROM event_chunks WHERE run_id = ?1 ORDER BY seq DESC LIMIT 1), 0)`},
		{&s.insertChunk, `INSERT INTO event_chunks (run_id, seq, last, events) VALUES (?, ?, ?, ?)`},
		{&s.lastExchange, `SELECT (SELECT 1 FROM runs WHERE id = ?1), (SELECT COALESCE(MAX(seq), 0) FROM exchanges WHERE run_id = ?1)`},
		{&s.lastPlan, `SELECT (SELECT 1 FROM runs WHERE id = ?1), (SELECT COALESCE(MAX(version), -1) FROM plans WHERE run_id = ?1)`},
		{&s.upsertPlan, `INSERT INTO plans (run_id, version, plan, trial, plan_hash, total, committed) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id, version) DO UPDATE SET plan = excluded.plan, trial = excluded.trial,
				plan_hash = excluded.plan_hash, total = excluded.total, committed = excluded.committed`},
	} {
		st, err := s.w.PrepareContext(ctx, p.query)
		if err != nil {
			return err
		}
		*p.stmt = st
	}
	return s.batch.prepare(ctx, s.w)
}

// Close closes the store; later calls return the first call's result.
func (s *SQLite) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		for _, st := range []*sql.Stmt{s.insertExchange, s.lastEvent, s.insertChunk, s.lastExchange, s.lastPlan, s.upsertPlan} {
			if st != nil {
				errs = append(errs, st.Close())
			}
		}
		errs = append(errs, s.batch.close())
		if s.r != nil {
			errs = append(errs, s.r.Close())
		}
		if s.w != nil {
			errs = append(errs, s.w.Close())
		}
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("store: close %s: %w", s.path, err)
		}
	})
	return s.closeErr
}

// Check runs SQLite's integrity check (PRAGMA integrity_check) and returns
// an error that lists the problems it finds.
func (s *SQLite) Check(ctx context.Context) error {
	problems, err := s.check(ctx)
	var se *sqlite.Error
	if errors.As(err, &se) && (se.Code()&0xff == codeCorrupt || se.Code()&0xff == codeNotADB) {
		problems, err = append(problems, err), nil
	}
	if err != nil {
		return fmt.Errorf("store: check %s: %w", s.path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("store: check %s: the database is corrupt: %w", s.path, errors.Join(problems...))
	}
	return nil
}

func (s *SQLite) check(ctx context.Context) (problems []error, err error) {
	rows, err := s.r.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return problems, err
		}
		if line != "ok" {
			problems = append(problems, errors.New(line))
		}
	}
	return problems, rows.Err()
}

// SQLite result codes (the primary code is the low byte of an extended
// one).
const (
	codeBusy    = 5  // SQLITE_BUSY
	codeLocked  = 6  // SQLITE_LOCKED
	codeCorrupt = 11 // SQLITE_CORRUPT
	codeNotADB  = 26 // SQLITE_NOTADB

	codeForeignKey = 787 // SQLITE_CONSTRAINT_FOREIGNKEY
)

// isForeignKey reports whether err is a foreign key constraint failing.
func isForeignKey(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == codeForeignKey
}

// isBusy reports whether err is SQLite saying another connection holds a
// lock.
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == codeBusy || c == codeLocked
}

// write runs f in a write transaction (BEGIN IMMEDIATE) and commits it. If
// SQLite reports the database busy — another process writing past the busy
// timeout SQLite itself waits, or a lock it does not wait for — the whole
// transaction is tried again until the busy timeout has passed.
func (s *SQLite) write(ctx context.Context, f func(*sql.Tx) error) error {
	if s.w == nil {
		return ErrReadOnly
	}
	deadline := time.Now().Add(s.busy)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		err := s.tryWrite(ctx, f)
		if err == nil || !isBusy(err) || time.Now().Add(pause).After(deadline) {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

func (s *SQLite) tryWrite(ctx context.Context, f func(*sql.Tx) error) error {
	// A dedicated connection, so that a failed COMMIT (which leaves
	// SQLite's transaction open) can be rolled back on it.
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return errors.Join(err, ignoreDone(tx.Rollback()))
	}
	if err := tx.Commit(); err != nil {
		// database/sql considers the transaction over; SQLite may not.
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
		return err
	}
	return nil
}

func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}

// nanos is t in Unix nanoseconds, or NULL for the zero time.
func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// timeOf is the inverse of nanos.
func timeOf(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64)
}

// text is b as a TEXT value, or NULL when b is nil. It does not copy b,
// which may be a task's output of many megabytes: the driver copies a
// string argument into SQLite when it binds it and keeps no reference to
// it once the statement has run, and b is not written meanwhile. A []byte
// argument would be stored as a BLOB, which JSON columns are not.
func text(b []byte) any {
	if b == nil {
		return nil
	}
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// checkJSON fails unless b is nil or JSON.
func checkJSON(what string, b []byte) error {
	if b != nil && !json.Valid(b) {
		return fmt.Errorf("%s is not valid JSON", what)
	}
	return nil
}

// planHash is the short hash of a plan that List shows.
func planHash(p []byte) string {
	sum := sha256.Sum256(p)
	return hex.EncodeToString(sum[:])[:12]
}

// noPlanHash is the plan_hash of a run created without a plan.
var noPlanHash = planHash(nil)

// checkPlan checks that a plan given to be stored is JSON, reading it
// once, and returns the count of its tasks: n when the caller counted
// them, else those of its "tasks" list (0 for a plan without one).
func checkPlan(p []byte, n int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("the plan's count of tasks is %d", n)
	case p == nil:
		return 0, nil
	case n > 0:
		return n, checkJSON("the plan", p)
	}
	var v struct {
		Tasks []struct{} `json:"tasks"`
	}
	// The JSON is checked whole before it is decoded: a type error is
	// valid JSON of another shape, whose decoding went on (a plan that is
	// not an object, a "tasks" that is not a list has no tasks).
	if err := json.Unmarshal(p, &v); err != nil {
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); !ok {
			return 0, errors.New("the plan is not valid JSON")
		}
	}
	return len(v.Tasks), nil
}

// CreateRun implements [Store]: the run's row and its plan version 0, if
// it has a plan, are written in one transaction, committed before it
// returns. The plan is kept in the version only, not in the run's row,
// which is rewritten whole by each change of status: the row has the
// plan's hash and count of tasks, and the hash tells a run created with a
// plan from one created without, whose hash is that of no plan.
func (s *SQLite) CreateRun(ctx context.Context, r Run) error {
	if r.ID == "" {
		return errors.New("store: create run: the run has no id")
	}
	tasks, err := checkPlan(r.Plan, r.TaskCount)
	if err := errors.Join(err, checkJSON("the spec", r.Spec)); err != nil {
		return fmt.Errorf("store: create run %q: %w", r.ID, err)
	}
	created := r.Created
	if created.IsZero() {
		created = time.Now()
	}
	hash := planHash(r.Plan)
	err = s.write(ctx, func(tx *sql.Tx) error {
		err := execOne(ctx, tx, ErrExists, `INSERT INTO runs (id, plan, plan_hash, total, mission, spec, status, error, created, updated)
			VALUES (?, NULL, ?, ?, ?, ?, ?, '', ?, ?) ON CONFLICT (id) DO NOTHING`,
			r.ID, hash, tasks, r.Mission, text(r.Spec), StatusRunning, created.UnixNano(), created.UnixNano())
		if err != nil || r.Plan == nil {
			return err
		}
		_, err = tx.StmtContext(ctx, s.upsertPlan).ExecContext(ctx, r.ID, 0, text(r.Plan), nil, hash, tasks, created.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("store: create run %q: %w", r.ID, err)
	}
	return nil
}

// CommitPlan implements [Store]: the version's row is written in one
// transaction, committed before it returns.
func (s *SQLite) CommitPlan(ctx context.Context, runID string, v PlanVersion) error {
	if v.Version < 0 {
		return fmt.Errorf("store: run %q: commit plan version %d: a version is 0 or more", runID, v.Version)
	}
	if v.Plan == nil {
		return fmt.Errorf("store: run %q: commit plan version %d: no plan given", runID, v.Version)
	}
	tasks, err := checkPlan(v.Plan, v.TaskCount)
	if err := errors.Join(err, checkJSON("the trial", v.Trial)); err != nil {
		return fmt.Errorf("store: run %q: commit plan version %d: %w", runID, v.Version, err)
	}
	committed := v.Committed
	if committed.IsZero() {
		committed = time.Now()
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		latest, err := last(ctx, tx.StmtContext(ctx, s.lastPlan), runID)
		if err != nil {
			return err
		}
		if next := latest + 1; v.Version > next {
			if next == 0 {
				return errors.New("the run has no plan version yet: the first is 0")
			}
			return fmt.Errorf("the run's latest plan version is %d: the next is %d", latest, next)
		}
		_, err = tx.StmtContext(ctx, s.upsertPlan).ExecContext(ctx, runID, v.Version, text(v.Plan), text(v.Trial),
			planHash(v.Plan), tasks, committed.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("store: run %q: commit plan version %d: %w", runID, v.Version, err)
	}
	return nil
}

// CommitTask implements [Store]: the row of the task's state in its
// version is replaced in one transaction, committed before it returns.
func (s *SQLite) CommitTask(ctx context.Context, runID string, t Task) error {
	if err := checkTask(t); err != nil {
		return fmt.Errorf("store: run %q: commit task %q: %w", runID, t.ID, err)
	}
	if err := s.write(ctx, func(tx *sql.Tx) error { return s.upsertTasks(ctx, tx, runID, []Task{t}) }); err != nil {
		return fmt.Errorf("store: run %q: commit task %q: %w", runID, t.ID, err)
	}
	return nil
}

// SetStatus implements [Store].
func (s *SQLite) SetStatus(ctx context.Context, runID, status, errText string) error {
	if status == "" {
		return fmt.Errorf("store: run %q: set status: no status given", runID)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		return execOne(ctx, tx, ErrNotFound, `UPDATE runs SET status = ?, error = ?, updated = ? WHERE id = ?`, status, errText, time.Now().UnixNano(), runID)
	})
	if err != nil {
		return fmt.Errorf("store: run %q: set status: %w", runID, err)
	}
	return nil
}

// last returns the last seq of the run's events or exchanges, or its last
// plan version (-1 for none), or ErrNotFound.
func last(ctx context.Context, st *sql.Stmt, runID string) (int, error) {
	var exists sql.NullInt64
	var seq int
	if err := st.QueryRowContext(ctx, runID).Scan(&exists, &seq); err != nil {
		return 0, err
	}
	if !exists.Valid {
		return 0, ErrNotFound
	}
	return seq, nil
}

// AppendEvents implements [Store].
func (s *SQLite) AppendEvents(ctx context.Context, runID string, events []Event) error {
	if err := checkEvents(events); err != nil {
		return fmt.Errorf("store: run %q: append events: %w", runID, err)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		if len(events) == 0 {
			// The run must exist all the same.
			_, err := last(ctx, tx.StmtContext(ctx, s.lastEvent), runID)
			return err
		}
		return s.appendEvents(ctx, tx, runID, events)
	})
	if err != nil {
		return fmt.Errorf("store: run %q: append events: %w", runID, err)
	}
	return nil
}

// RecordExchange implements [Store].
func (s *SQLite) RecordExchange(ctx context.Context, runID, key string, exchange json.RawMessage) error {
	if exchange == nil || !json.Valid(exchange) {
		return fmt.Errorf("store: run %q: record exchange %s: the exchange is not valid JSON", runID, key)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		seq, err := last(ctx, tx.StmtContext(ctx, s.lastExchange), runID)
		if err != nil {
			return err
		}
		_, err = tx.StmtContext(ctx, s.insertExchange).ExecContext(ctx, runID, seq+1, key, string(exchange))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: run %q: record exchange %s: %w", runID, key, err)
	}
	return nil
}

// Load implements [Store]: it reads the run in one read transaction, a
// consistent snapshot however other processes write.
func (s *SQLite) Load(ctx context.Context, runID string) (*Record, error) {
	rec, err := s.load(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("store: load run %q: %w", runID, err)
	}
	return rec, nil
}

func (s *SQLite) load(ctx context.Context, runID string) (_ *Record, err error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, ignoreDone(tx.Rollback())) }()
	rec := &Record{Tasks: map[string]Task{}}
	var plan, spec []byte
	var hash string
	var created, updated sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT id, plan, plan_hash, total, mission, spec, created, status, error,
			MAX(updated, COALESCE((SELECT MAX(committed) FROM tasks WHERE run_id = runs.id), 0),
				COALESCE((SELECT MAX(committed) FROM plans WHERE run_id = runs.id), 0))
		FROM runs WHERE id = ?`, runID).
		Scan(&rec.ID, &plan, &hash, &rec.TaskCount, &rec.Mission, &spec, &created, &rec.Status, &rec.Error, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	rec.Plan, rec.Spec, rec.Created, rec.Updated = raw(plan), raw(spec), timeOf(created), timeOf(updated)

	rows, err := tx.QueryContext(ctx, `SELECT version, plan, trial, total, committed FROM plans WHERE run_id = ? ORDER BY version`, runID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var v PlanVersion
		var plan, trial []byte
		var committed sql.NullInt64
		if err := rows.Scan(&v.Version, &plan, &trial, &v.TaskCount, &committed); err != nil {
			rows.Close()
			return nil, err
		}
		v.Plan, v.Trial, v.Committed = raw(plan), raw(trial), timeOf(committed)
		rec.Plans = append(rec.Plans, v)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if rec.Plan == nil && hash != noPlanHash && len(rec.Plans) > 0 && rec.Plans[0].Version == 0 {
		// Created with its plan, which it keeps as version 0 only.
		rec.Plan = rec.Plans[0].Plan
	}

	rows, err = tx.QueryContext(ctx, `SELECT task_id, version, status, attempts, output, error, diagnosis, started, duration, prompt_tokens, completion_tokens, committed
		FROM tasks WHERE run_id = ? ORDER BY version, task_id`, runID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var t Task
		var out []byte
		var started, committed sql.NullInt64
		var dur int64
		if err := rows.Scan(&t.ID, &t.Version, &t.Status, &t.Attempts, &out, &t.Error, &t.Diagnosis, &started, &dur, &t.Tokens.Prompt, &t.Tokens.Completion, &committed); err != nil {
			rows.Close()
			return nil, err
		}
		t.Output, t.Started, t.Duration, t.Committed = raw(out), timeOf(started), time.Duration(dur), timeOf(committed)
		rec.Commits = append(rec.Commits, t)
		rec.Tasks[t.ID] = t // by version: a later version's state overwrites an earlier one's
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}

	if rec.Events, err = s.events(ctx, tx, runID, 0); err != nil {
		return nil, err
	}

	if s.schema >= 3 {
		if rec.Owner, err = leaseOf(ctx, tx, runID); err != nil {
			return nil, err
		}
	}

	if s.schema >= 4 {
		if rec.Processes, err = processesOf(ctx, tx, runID); err != nil {
			return nil, err
		}
	}

	rows, err = tx.QueryContext(ctx, `SELECT seq, key, exchange FROM exchanges WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var x Exchange
		var data []byte
		if err := rows.Scan(&x.Seq, &x.Key, &data); err != nil {
			rows.Close()
			return nil, err
		}
		x.Exchange = raw(data)
		rec.Exchanges = append(rec.Exchanges, x)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	return rec, nil
}

// raw is a scanned JSON column: nil for NULL.
func raw(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return json.RawMessage(b)
}

// List implements [Store]: [SQLite.Runs] of every run.
func (s *SQLite) List(ctx context.Context) ([]Summary, error) {
	out, _, err := s.Runs(ctx, RunQuery{})
	return out, err
}

// ownerRow is a scanned lease, NULL when the run has none.
type ownerRow struct {
	id, host           sql.NullString
	pid                sql.NullInt64
	started, heartbeat sql.NullInt64
}

func (r ownerRow) owner() *Owner {
	if !r.id.Valid {
		return nil
	}
	return &Owner{ID: r.id.String, PID: int(r.pid.Int64), Host: r.host.String, Started: timeOf(r.started), Heartbeat: timeOf(r.heartbeat)}
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// leaseOf returns the owner of the run, nil for none.
func leaseOf(ctx context.Context, q querier, runID string) (*Owner, error) {
	var r ownerRow
	err := q.QueryRowContext(ctx, `SELECT owner, pid, host, started, heartbeat FROM leases WHERE run_id = ?`, runID).
		Scan(&r.id, &r.pid, &r.host, &r.started, &r.heartbeat)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return r.owner(), nil
}

// Acquire implements [Store]: the owner is read and replaced in one write
// transaction, so that of two processes acquiring one run at once, one
// gets it and the other sees it owned.
func (s *SQLite) Acquire(ctx context.Context, runID string, o Owner, dead func(Owner) bool) error {
	if o.ID == "" {
		return fmt.Errorf("store: run %q: acquire: the owner has no id", runID)
	}
	now := time.Now()
	if o.Started.IsZero() {
		o.Started = now
	}
	if o.Heartbeat.IsZero() {
		o.Heartbeat = now
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		cur, err := leaseOf(ctx, tx, runID)
		if err != nil {
			return err
		}
		if cur != nil && cur.ID != o.ID && (dead == nil || !dead(*cur)) {
			return &OwnedError{RunID: runID, Owner: *cur}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO leases (run_id, owner, pid, host, started, heartbeat) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, host = excluded.host,
				started = excluded.started, heartbeat = excluded.heartbeat, cancel = NULL`,
			runID, o.ID, o.PID, o.Host, o.Started.UnixNano(), o.Heartbeat.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("store: run %q: acquire: %w", runID, err)
	}
	return nil
}

// Heartbeat implements [Store].
func (s *SQLite) Heartbeat(ctx context.Context, runID string, o Owner) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		return execOne(ctx, tx, ErrNotOwner, `UPDATE leases SET heartbeat = ? WHERE run_id = ? AND owner = ?`, time.Now().UnixNano(), runID, o.ID)
	})
	if err != nil {
		return fmt.Errorf("store: run %q: heartbeat: %w", runID, err)
	}
	return nil
}

// Release implements [Store].
func (s *SQLite) Release(ctx context.Context, runID string, o Owner) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE run_id = ? AND owner = ?`, runID, o.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: run %q: release: %w", runID, err)
	}
	return nil
}

// RecordProcess implements [Store].
func (s *SQLite) RecordProcess(ctx context.Context, runID string, p Process) error {
	recorded := p.Recorded
	if recorded.IsZero() {
		recorded = time.Now()
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO processes (run_id, task_id, attempt, key, pgid, host, boot_id, start_time, recorded)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			runID, p.TaskID, p.Attempt, p.Key, p.PGID, p.Host, p.BootID, p.Start, recorded.UnixNano())
		if isForeignKey(err) {
			return ErrNotFound
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("store: run %q: record process %d of task %q: %w", runID, p.PGID, p.TaskID, err)
	}
	return nil
}

// ForgetProcesses implements [Store].
func (s *SQLite) ForgetProcesses(ctx context.Context, runID string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM processes WHERE run_id = ?`, runID)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: run %q: forget processes: %w", runID, err)
	}
	return nil
}

type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// processesOf returns the processes recorded for the run, in order.
func processesOf(ctx context.Context, q rowsQuerier, runID string) ([]Process, error) {
	rows, err := q.QueryContext(ctx, `SELECT task_id, attempt, key, pgid, host, boot_id, start_time, recorded
		FROM processes WHERE run_id = ? ORDER BY rowid`, runID)
	if err != nil {
		return nil, err
	}
	var out []Process
	for rows.Next() {
		var p Process
		var recorded sql.NullInt64
		if err := rows.Scan(&p.TaskID, &p.Attempt, &p.Key, &p.PGID, &p.Host, &p.BootID, &p.Start, &recorded); err != nil {
			rows.Close()
			return nil, err
		}
		p.Recorded = timeOf(recorded)
		out = append(out, p)
	}
	return out, errors.Join(rows.Err(), rows.Close())
}

// execOne runs a statement that must change a row, and returns none when
// it changes nothing: the run does not exist, or is not as the statement
// expects.
func execOne(ctx context.Context, tx *sql.Tx, none error, query string, args ...any) error {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return none
	}
	return nil
}
