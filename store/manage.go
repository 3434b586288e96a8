package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// EventsAfter implements [Store]: it reads in one read transaction, so
// that a reader polling a run another process writes sees whole commits.
func (s *SQLite) EventsAfter(ctx context.Context, runID string, after int) (_ []Event, err error) {
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

// runExists fails with ErrNotFound unless the run exists.
func runExists(ctx context.Context, q querier, runID string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ?`, runID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// DeleteRun implements [Store]: the lease is read and the run deleted in
// one write transaction, so that a process that acquires the run at the
// same time either finds it gone or keeps it.
func (s *SQLite) DeleteRun(ctx context.Context, runID string, dead func(Owner) bool) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		cur, err := leaseOf(ctx, tx, runID)
		if err != nil {
			return err
		}
		if cur != nil && (dead == nil || !dead(*cur)) {
			return &OwnedError{RunID: runID, Owner: *cur}
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

// RequestCancel implements [Store].
func (s *SQLite) RequestCancel(ctx context.Context, runID string, o Owner) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := runExists(ctx, tx, runID); err != nil {
			return err
		}
		return execOne(ctx, tx, ErrNotOwner, `UPDATE leases SET cancel = COALESCE(cancel, ?) WHERE run_id = ? AND owner = ?`, time.Now().UnixNano(), runID, o.ID)
	})
	if err != nil {
		return fmt.Errorf("store: run %q: request cancel: %w", runID, err)
	}
	return nil
}

// CancelRequested implements [Store]: a read, which takes no write lock,
// so that an owner may ask often.
func (s *SQLite) CancelRequested(ctx context.Context, runID string, o Owner) (bool, error) {
	var cancel sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT cancel FROM leases WHERE run_id = ? AND owner = ?`, runID, o.ID).Scan(&cancel)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotOwner
		if rerr := runExists(ctx, s.r, runID); rerr != nil {
			err = rerr
		}
	}
	if err != nil {
		return false, fmt.Errorf("store: run %q: cancel requested: %w", runID, err)
	}
	return cancel.Valid, nil
}
