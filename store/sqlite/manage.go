package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/dagent-dev/dagent/store"
)

// EventsAfter implements [store.Store]: it reads in one read transaction, so
// that a reader polling a run another process writes sees whole commits.
func (s *Store) EventsAfter(ctx context.Context, runID string, after int) (_ []store.Event, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("store: run %q: events after %d: %w", runID, after, err)
		}
	}()
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, ignoreDone(tx.Rollback())) }()
	if err := runExists(ctx, tx, runID); err != nil {
		return nil, err
	}
	return s.events(ctx, tx, runID, after)
}

// runExists fails with [store.ErrNotFound] unless the run exists.
func runExists(ctx context.Context, q querier, runID string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ?`, runID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// DeleteRun implements [store.Store]: the lease is read and the run deleted in
// one write transaction, so that a process that acquires the run at the
// same time either finds it gone or keeps it.
func (s *Store) DeleteRun(ctx context.Context, runID string, dead func(store.Owner) bool) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		cur, err := leaseOf(ctx, tx, runID)
		if err != nil {
			return err
		}
		if cur != nil && (dead == nil || !dead(*cur)) {
			return &store.OwnedError{RunID: runID, Owner: *cur}
		}
		// The run's rows in the other tables go with it (ON DELETE
		// CASCADE).
		_, err = tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, runID)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: run %q: delete: %w", runID, err)
	}
	return nil
}

// RequestCancel implements [store.Store].
func (s *Store) RequestCancel(ctx context.Context, runID string, o store.Owner) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		return execOne(ctx, tx, store.ErrNotOwner, `UPDATE leases SET cancel = COALESCE(cancel, ?) WHERE run_id = ? AND owner = ?`, time.Now().UnixNano(), runID, o.ID)
	})
	if err != nil {
		return fmt.Errorf("store: run %q: request cancel: %w", runID, err)
	}
	return nil
}

// CancelRequested implements [store.Store]: a read, which takes no write lock,
// so that an owner may ask often.
func (s *Store) CancelRequested(ctx context.Context, runID string, o store.Owner) (bool, error) {
	var cancel sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT cancel FROM leases WHERE run_id = ? AND owner = ?`, runID, o.ID).Scan(&cancel)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotOwner
		if rerr := runExists(ctx, s.r, runID); rerr != nil {
			err = rerr
		}
	}
	if err != nil {
		return false, fmt.Errorf("store: run %q: cancel requested: %w", runID, err)
	}
	return cancel.Valid, nil
}
