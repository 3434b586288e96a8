package sqlite_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/store"
)

// Events come back as they were appended, in order and numbered on across
// appends, whatever their text and however many chunks they fill.
func TestEventsRoundTrip(t *testing.T) {
	s := open(t)
	createRun(t, s, "r")
	big := json.RawMessage(`{"error":"` + strings.Repeat("x", 700<<10) + `"}`)
	at := time.Unix(1700000000, 123456789)
	first := []store.Event{
		{Kind: "run_started", Time: at},
		{Kind: "task_started", TaskID: `a "quoted" \ id`, Time: at, Data: json.RawMessage(`{"attempt":1}`)},
		{Kind: "task_failed", TaskID: "日本\u2028", Time: at, Data: big},
		{Kind: "task_failed", TaskID: "b", Time: at, Data: big}, // past 1 MiB: the next event starts a chunk
		{Kind: "note\x1b[31m", Time: at, Data: json.RawMessage(`null`)},
	}
	require.NoError(t, s.AppendEvents(ctx, "r", first))
	require.NoError(t, s.CommitBatch(ctx, "r", store.Batch{Events: []store.Event{{Kind: "run_finished", Time: at}}}))
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	want := append(first, store.Event{Kind: "run_finished", Time: at})
	want[4].Data = nil
	for i := range want {
		want[i].Seq = i + 1
	}
	assertSameEvents(t, want, rec.Events)

	var chunks int
	require.NoError(t, raw(t, dbPath(t)).QueryRow(`SELECT COUNT(*) FROM event_chunks WHERE run_id = 'r'`).Scan(&chunks))
	assert.Equal(t, 3, chunks, "two appends, the first split once it passed 1 MiB")
}

// An event whose data is not JSON is refused: its chunk would be unreadable.
func TestEventsRefuseBadData(t *testing.T) {
	s := open(t)
	createRun(t, s, "r")
	err := s.AppendEvents(ctx, "r", []store.Event{{Kind: "x", Data: json.RawMessage(`{"a":`)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "x event")
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Empty(t, rec.Events)
}
