package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/store"
)

// A run's events are kept in chunks: one row holds, as a JSON array, the
// events one transaction appends, numbered on from the row's seq. A row
// costs the database several times what encoding its events costs, and a
// task's run appends two or more events.

// maxChunkBytes is about how many bytes of encoded events one chunk holds:
// events beyond it start the next chunk.
const maxChunkBytes = 1 << 20

// chunkEvent is an event in a chunk.
type chunkEvent struct {
	Kind   string          `json:"kind"`
	Time   int64           `json:"time"` // Unix nanoseconds
	TaskID string          `json:"task_id,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// appendEvents appends the events to the run's timeline, numbered on from
// its last event, a zero Time being the current time.
func (s *Store) appendEvents(ctx context.Context, tx *sql.Tx, runID string, events []store.Event) error {
	if len(events) == 0 {
		return nil
	}
	seq, err := last(ctx, tx.StmtContext(ctx, s.lastEvent), runID)
	if err != nil {
		return err
	}
	now := time.Now()
	insert := tx.StmtContext(ctx, s.insertChunk)
	var chunk []byte
	for len(events) > 0 {
		first := seq + 1
		chunk = append(chunk[:0], '[')
		for len(events) > 0 && (seq < first || len(chunk) < maxChunkBytes) {
			if seq >= first {
				chunk = append(chunk, ',')
			}
			chunk = appendEvent(chunk, events[0], now)
			events = events[1:]
			seq++
		}
		chunk = append(chunk, ']')
		if _, err := insert.ExecContext(ctx, runID, first, seq, text(chunk)); err != nil {
			return err
		}
	}
	return nil
}

// appendEvent appends e to b as a chunkEvent; its Data is JSON already.
func appendEvent(b []byte, e store.Event, now time.Time) []byte {
	t := e.Time
	if t.IsZero() {
		t = now
	}
	b = append(b, `{"kind":`...)
	b = jsonv.AppendString(b, e.Kind)
	b = append(b, `,"time":`...)
	b = strconv.AppendInt(b, t.UnixNano(), 10)
	if e.TaskID != "" {
		b = append(b, `,"task_id":`...)
		b = jsonv.AppendString(b, e.TaskID)
	}
	if e.Data != nil {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	return append(b, '}')
}

// events reads the run's timeline after its event after in tx.
func (s *Store) events(ctx context.Context, tx *sql.Tx, runID string, after int) ([]store.Event, error) {
	if s.schema < 5 {
		return s.eventRows(ctx, tx, runID, after)
	}
	rows, err := tx.QueryContext(ctx, `SELECT seq, last, events FROM event_chunks WHERE run_id = ? AND last > ? ORDER BY seq`, runID, after)
	if err != nil {
		return nil, err
	}
	var out []store.Event
	for rows.Next() {
		var first, last int
		var chunk []byte
		if err := rows.Scan(&first, &last, &chunk); err != nil {
			rows.Close()
			return nil, err
		}
		var evs []chunkEvent
		if err := json.Unmarshal(chunk, &evs); err != nil {
			rows.Close()
			return nil, fmt.Errorf("events %d to %d: %w", first, last, err)
		}
		if len(evs) != last-first+1 {
			rows.Close()
			return nil, fmt.Errorf("events %d to %d: the chunk holds %d events", first, last, len(evs))
		}
		for k, e := range evs {
			if first+k <= after {
				continue
			}
			data := e.Data
			if string(data) == "null" {
				data = nil
			}
			out = append(out, store.Event{Seq: first + k, Kind: e.Kind, Time: time.Unix(0, e.Time), TaskID: e.TaskID, Data: data})
		}
	}
	return out, errors.Join(rows.Err(), rows.Close())
}

// eventRows reads the run's timeline after its event after from a
// database of schema 4 or older, opened read-only as it is: one row per
// event.
func (s *Store) eventRows(ctx context.Context, tx *sql.Tx, runID string, after int) ([]store.Event, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq, kind, time, task_id, data FROM events WHERE run_id = ? AND seq > ? ORDER BY seq`, runID, after)
	if err != nil {
		return nil, err
	}
	var out []store.Event
	for rows.Next() {
		var e store.Event
		var at sql.NullInt64
		var data []byte
		if err := rows.Scan(&e.Seq, &e.Kind, &at, &e.TaskID, &data); err != nil {
			rows.Close()
			return nil, err
		}
		e.Time, e.Data = timeOf(at), raw(data)
		out = append(out, e)
	}
	return out, errors.Join(rows.Err(), rows.Close())
}
