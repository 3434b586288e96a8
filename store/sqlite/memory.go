package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dagent-dev/dagent/store"
)

// Outcomes implements [store.Store]: one read transaction reads the runs, the
// plan versions that name each task's agent, the task states and the
// events that carry a failure's class.
func (s *Store) Outcomes(ctx context.Context, runs int) (_ []store.TaskOutcome, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("store: outcomes of %d runs: %w", runs, err)
		}
	}()
	if runs <= 0 {
		return nil, nil
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, ignoreDone(tx.Rollback())) }()
	rows, err := tx.QueryContext(ctx, `SELECT id, plan FROM runs ORDER BY created DESC, id DESC LIMIT ?`, runs)
	if err != nil {
		return nil, err
	}
	type run struct {
		id   string
		plan []byte
	}
	var ids []run
	for rows.Next() {
		var r run
		if err := rows.Scan(&r.id, &r.plan); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	var out []store.TaskOutcome
	for _, r := range ids {
		o, err := s.outcomes(ctx, tx, r.id, r.plan)
		if err != nil {
			return nil, fmt.Errorf("run %q: %w", r.id, err)
		}
		out = append(out, o...)
	}
	return out, nil
}

// outcomes returns the task outcomes of one run, whose first plan is
// plan when the run keeps it apart from its versions.
func (s *Store) outcomes(ctx context.Context, tx *sql.Tx, runID string, first []byte) ([]store.TaskOutcome, error) {
	plans := map[int]planAgents{}
	if first != nil {
		plans[0] = agentsOf(first)
	}
	rows, err := tx.QueryContext(ctx, `SELECT version, plan FROM plans WHERE run_id = ?`, runID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var v int
		var p []byte
		if err := rows.Scan(&v, &p); err != nil {
			rows.Close()
			return nil, err
		}
		plans[v] = agentsOf(p)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	events, err := s.events(ctx, tx, runID, 0)
	if err != nil {
		return nil, err
	}
	// A task's class is the last one an event about it recorded.
	classes := map[string]string{}
	for _, e := range events {
		if e.TaskID == "" || len(e.Data) == 0 {
			continue
		}
		var d struct {
			Class string `json:"class"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Class != "" {
			classes[e.TaskID] = d.Class
		}
	}
	rows, err = tx.QueryContext(ctx, `SELECT task_id, version, status, error FROM tasks WHERE run_id = ? ORDER BY version, task_id`, runID)
	if err != nil {
		return nil, err
	}
	var out []store.TaskOutcome
	for rows.Next() {
		o := store.TaskOutcome{RunID: runID}
		if err := rows.Scan(&o.TaskID, &o.Version, &o.Status, &o.Error); err != nil {
			rows.Close()
			return nil, err
		}
		p := plans[o.Version]
		o.Agent = p.tasks[o.TaskID]
		o.Tools = p.tools[o.Agent]
		if o.Status != "done" {
			o.Class = classes[o.TaskID]
		}
		out = append(out, o)
	}
	return out, errors.Join(rows.Err(), rows.Close())
}

// planAgents is what a canonical plan says of its tasks' agents.
type planAgents struct {
	tasks map[string]string   // task id: agent
	tools map[string][]string // agent: its tools
}

// agentsOf reads the agents of the canonical plan p; a plan it cannot
// read names none.
func agentsOf(p []byte) planAgents {
	var doc struct {
		Agents map[string]struct {
			Tools []string `json:"tools"`
		} `json:"agents"`
		Tasks []struct {
			ID    string `json:"id"`
			Agent string `json:"agent"`
		} `json:"tasks"`
	}
	out := planAgents{tasks: map[string]string{}, tools: map[string][]string{}}
	if json.Unmarshal(p, &doc) != nil {
		return out
	}
	for _, t := range doc.Tasks {
		out.tasks[t.ID] = t.Agent
	}
	for name, a := range doc.Agents {
		out.tools[name] = a.Tools
	}
	return out
}

// CachePlan implements [store.Store].
func (s *Store) CachePlan(ctx context.Context, p store.CachedPlan) error {
	err := func() error {
		if p.Key == "" {
			return errors.New("no key")
		}
		if len(p.Plan) == 0 {
			return errors.New("no plan")
		}
		if err := checkJSON("plan", p.Plan); err != nil {
			return err
		}
		return s.write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO plan_cache (key, mission, plan, run_id, stored) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (key) DO UPDATE SET mission = excluded.mission, plan = excluded.plan, run_id = excluded.run_id, stored = excluded.stored`,
				p.Key, p.Mission, text(p.Plan), p.RunID, nanos(cmpTime(p.Stored)))
			return err
		})
	}()
	if err != nil {
		return fmt.Errorf("store: cache plan: %w", err)
	}
	return nil
}

// CachedPlan implements [store.Store].
func (s *Store) CachedPlan(ctx context.Context, key string) (*store.CachedPlan, error) {
	if s.schema < 7 {
		return nil, fmt.Errorf("store: cached plan: %w", store.ErrNotCached)
	}
	p := store.CachedPlan{Key: key}
	var plan []byte
	var stored sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT mission, plan, run_id, stored FROM plan_cache WHERE key = ?`, key).Scan(&p.Mission, &plan, &p.RunID, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotCached
	}
	if err != nil {
		return nil, fmt.Errorf("store: cached plan: %w", err)
	}
	p.Plan, p.Stored = raw(plan), timeOf(stored)
	return &p, nil
}

// cmpTime is t, or the current time for a zero t.
func cmpTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}
