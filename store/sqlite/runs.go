package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/store"
)

// checkQuery fails on a query no store can answer.
func checkQuery(q store.RunQuery) error {
	if q.Limit < 0 || q.Offset < 0 {
		return fmt.Errorf("negative limit %d or offset %d", q.Limit, q.Offset)
	}
	return nil
}

// updatedSQL is when a run of runs r was last updated: its status changed,
// or a task or a plan version was committed.
const updatedSQL = `MAX(r.updated, COALESCE((SELECT MAX(t.committed) FROM tasks t WHERE t.run_id = r.id), 0),
		COALESCE((SELECT MAX(p.committed) FROM plans p WHERE p.run_id = r.id), 0))`

// whereClause is q as a WHERE clause over runs r, with its arguments.
func whereClause(q store.RunQuery) (string, []any, error) {
	var conds []string
	var args []any
	if len(q.Statuses) > 0 {
		conds = append(conds, `r.status IN (`+strings.Repeat("?, ", len(q.Statuses)-1)+`?)`)
		for _, st := range q.Statuses {
			args = append(args, st)
		}
	}
	if q.Prefix != "" {
		conds = append(conds, `substr(r.id, 1, length(?)) = ?`)
		args = append(args, q.Prefix, q.Prefix)
	}
	if !q.UpdatedBefore.IsZero() {
		conds = append(conds, updatedSQL+` < ?`)
		args = append(args, q.UpdatedBefore.UnixNano())
	}
	if !q.UpdatedAfter.IsZero() {
		// updatedSQL > ?, said so that the tasks and the plans are read
		// once, not once for each run: a quarter of the time.
		conds = append(conds, `(r.updated > ? OR r.id IN (SELECT t.run_id FROM tasks t WHERE t.committed > ?)
			OR r.id IN (SELECT p.run_id FROM plans p WHERE p.committed > ?))`)
		after := q.UpdatedAfter.UnixNano()
		args = append(args, after, after, after)
	}
	// A list of ids is one argument however long it is: SQLite limits
	// the arguments of a statement.
	for _, ids := range []struct {
		cond string
		ids  []string
	}{{`r.id IN (SELECT value FROM json_each(?))`, q.IDs}, {`r.id NOT IN (SELECT value FROM json_each(?))`, q.Exclude}} {
		if len(ids.ids) == 0 {
			continue
		}
		list, err := json.Marshal(ids.ids)
		if err != nil {
			return "", nil, err
		}
		conds = append(conds, ids.cond)
		args = append(args, string(list))
	}
	if len(conds) == 0 {
		return "", nil, nil
	}
	return ` WHERE ` + strings.Join(conds, ` AND `), args, nil
}

// Runs implements [store.Store]: the count and the page are read in one read
// transaction, and a page reads the summaries of its own runs only.
func (s *Store) Runs(ctx context.Context, q store.RunQuery) ([]store.Summary, int, error) {
	out, total, err := s.runs(ctx, q)
	if err != nil {
		return nil, 0, fmt.Errorf("store: list runs: %w", err)
	}
	return out, total, nil
}

func (s *Store) runs(ctx context.Context, q store.RunQuery) (_ []store.Summary, total int, err error) {
	if err := checkQuery(q); err != nil {
		return nil, 0, err
	}
	where, args, err := whereClause(q)
	if err != nil {
		return nil, 0, err
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, err
	}
	defer func() { err = errors.Join(err, ignoreDone(tx.Rollback())) }()
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs r`+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	if total <= q.Offset {
		return []store.Summary{}, total, nil
	}
	// A run's latest plan is its highest plan version's, else the plan it
	// started with; a task's latest state is its highest version's. A
	// database of schema 2, read as it is, has no leases.
	owner, leases := `NULL, NULL, NULL, NULL, NULL`, ``
	if s.schema >= 3 {
		owner, leases = `l.owner, l.pid, l.host, l.started, l.heartbeat`, ` LEFT JOIN leases l ON l.run_id = r.id`
	}
	limit := -1 // none
	if q.Limit > 0 {
		limit = q.Limit
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+owner+`, r.id, r.created, `+updatedSQL+`,
			r.status,
			COALESCE((SELECT p.total FROM plans p WHERE p.run_id = r.id ORDER BY p.version DESC LIMIT 1), r.total),
			r.mission,
			COALESCE((SELECT p.plan_hash FROM plans p WHERE p.run_id = r.id ORDER BY p.version DESC LIMIT 1), r.plan_hash),
			(SELECT COUNT(*) FROM tasks t WHERE t.run_id = r.id AND t.status = 'done'
				AND t.version = (SELECT MAX(u.version) FROM tasks u WHERE u.run_id = t.run_id AND u.task_id = t.task_id))
		FROM runs r`+leases+where+` ORDER BY r.created DESC, r.id DESC LIMIT ? OFFSET ?`, append(args, limit, q.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	n := total - q.Offset
	if q.Limit > 0 {
		n = min(n, q.Limit)
	}
	out := make([]store.Summary, 0, n)
	for rows.Next() {
		var sm store.Summary
		var created, updated sql.NullInt64
		var lo ownerRow
		if err := rows.Scan(&lo.id, &lo.pid, &lo.host, &lo.started, &lo.heartbeat, &sm.ID, &created, &updated, &sm.Status, &sm.Total, &sm.Mission, &sm.PlanHash, &sm.Done); err != nil {
			return nil, 0, err
		}
		sm.Created, sm.Updated, sm.Owner = timeOf(created), timeOf(updated), lo.owner()
		out = append(out, sm)
	}
	return out, total, rows.Err()
}
