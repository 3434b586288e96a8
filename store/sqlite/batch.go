package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/store"
)

// maxRows is how many task states one statement of a batch writes at
// most: the statements write 1, 2, 4, ... maxRows rows, so that a batch of
// n states takes about log2(n) statements, each prepared once.
const maxRows = 1 << maxShift

const maxShift = 6

// batchStmts are the prepared statements that write many task states at
// once: tasks[k] writes 2^k rows.
type batchStmts struct {
	tasks [maxShift + 1]*sql.Stmt
}

func (b *batchStmts) prepare(ctx context.Context, db *sql.DB) error {
	for k := range b.tasks {
		var err error
		if b.tasks[k], err = db.PrepareContext(ctx, `INSERT INTO tasks (run_id, task_id, version, status, attempts, output, error, diagnosis, started, duration, prompt_tokens, completion_tokens, committed)
			VALUES `+rows(1<<k, 13)+`
			ON CONFLICT (run_id, task_id, version) DO UPDATE SET status = excluded.status, attempts = excluded.attempts,
				output = excluded.output, error = excluded.error, diagnosis = excluded.diagnosis, started = excluded.started,
				duration = excluded.duration, prompt_tokens = excluded.prompt_tokens,
				completion_tokens = excluded.completion_tokens, committed = excluded.committed`); err != nil {
			return err
		}
	}
	return nil
}

func (b *batchStmts) close() error {
	var errs []error
	for _, st := range b.tasks {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// rows is the VALUES list of n rows of k parameters.
func rows(n, k int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", k), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// chunks calls f with the successive chunks of n rows that the statements
// of batchStmts write: the largest first, so that rows keep their order.
func chunks(n int, f func(k, from, to int) error) error {
	for from := 0; from < n; {
		k := min(bits.Len(uint(n-from))-1, maxShift)
		to := from + 1<<k
		if err := f(k, from, to); err != nil {
			return err
		}
		from = to
	}
	return nil
}

// CommitBatch implements [store.Store]: the tasks' rows are replaced and the
// events appended in one transaction, committed before it returns.
func (s *Store) CommitBatch(ctx context.Context, runID string, b store.Batch) error {
	for _, t := range b.Tasks {
		if err := checkTask(t); err != nil {
			return fmt.Errorf("store: run %q: commit batch: task %q: %w", runID, t.ID, err)
		}
	}
	if err := checkEvents(b.Events); err != nil {
		return fmt.Errorf("store: run %q: commit batch: %w", runID, err)
	}
	if len(b.Tasks) == 0 && len(b.Events) == 0 {
		return nil
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := s.upsertTasks(ctx, tx, runID, b.Tasks); err != nil {
			return err
		}
		return s.appendEvents(ctx, tx, runID, b.Events)
	})
	if err != nil {
		return fmt.Errorf("store: run %q: commit batch of %d tasks and %d events: %w", runID, len(b.Tasks), len(b.Events), err)
	}
	return nil
}

// checkTask fails unless t can be committed.
func checkTask(t store.Task) error {
	if t.ID == "" {
		return errors.New("the task has no id")
	}
	if t.Version < 0 {
		return fmt.Errorf("plan version %d: a version is 0 or more", t.Version)
	}
	return checkJSON("the output", t.Output)
}

// checkEvents fails unless the events can be appended.
func checkEvents(events []store.Event) error {
	for _, e := range events {
		if e.Kind == "" {
			return errors.New("an event has no kind")
		}
		if err := checkJSON("event data", e.Data); err != nil {
			return fmt.Errorf("%s event: %w", e.Kind, err)
		}
	}
	return nil
}

// maxStatementBytes is about how many bytes of outputs one statement
// binds at most; a larger output is written alone. SQLite copies each
// bound value, then builds the row from it: rows written together hold
// those copies together.
const maxStatementBytes = 1 << 20

// upsertTasks replaces the rows of the tasks' states in their versions, a
// later state of a task and version replacing an earlier one.
func (s *Store) upsertTasks(ctx context.Context, tx *sql.Tx, runID string, tasks []store.Task) error {
	now := time.Now()
	for len(tasks) > 0 {
		n, size := 1, len(tasks[0].Output)
		for n < len(tasks) && size+len(tasks[n].Output) <= maxStatementBytes {
			size += len(tasks[n].Output)
			n++
		}
		if err := s.upsertRows(ctx, tx, runID, tasks[:n], now); err != nil {
			return err
		}
		tasks = tasks[n:]
	}
	return nil
}

// upsertRows writes the tasks' rows in as few statements as it can, now
// being when those without a commit time were committed.
func (s *Store) upsertRows(ctx context.Context, tx *sql.Tx, runID string, tasks []store.Task, now time.Time) error {
	args := make([]any, 0, 13*min(len(tasks), maxRows))
	return chunks(len(tasks), func(k, from, to int) error {
		args = args[:0]
		for _, t := range tasks[from:to] {
			committed := t.Committed
			if committed.IsZero() {
				committed = now
			}
			args = append(args, runID, t.ID, t.Version, t.Status, t.Attempts, text(t.Output), t.Error, t.Diagnosis,
				nanos(t.Started), int64(t.Duration), t.Tokens.Prompt, t.Tokens.Completion, committed.UnixNano())
		}
		// The run's existence is the foreign key's to check: the runs row,
		// which holds the plan, is not written.
		_, err := tx.StmtContext(ctx, s.batch.tasks[k]).ExecContext(ctx, args...)
		if isForeignKey(err) {
			return store.ErrNotFound
		}
		return err
	})
}
