package sqlite_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/store"
)

// TestCommitBatchOfLargeOutputs commits outputs that the batch writes in
// several statements, some alone, and checks that each is stored as TEXT,
// as outputs always were, and reads back as written.
func TestCommitBatchOfLargeOutputs(t *testing.T) {
	s := open(t)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
	sizes := []int{10, 3 << 20, 10, 10, 600 << 10, 600 << 10, 2 << 20, 0, 10}
	var batch store.Batch
	for i, n := range sizes {
		out := json.RawMessage(strconv.Quote(strings.Repeat(string(rune('a'+i)), n)))
		if n == 0 {
			out = nil
		}
		batch.Tasks = append(batch.Tasks, store.Task{ID: "t" + strconv.Itoa(i), Status: "done", Attempts: 1, Output: out})
	}
	require.NoError(t, s.CommitBatch(ctx, "r", batch))

	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	require.Len(t, rec.Tasks, len(sizes))
	committed := rec.Tasks["t0"].Committed
	for _, want := range batch.Tasks {
		got := rec.Tasks[want.ID]
		assert.Equal(t, string(want.Output), string(got.Output), want.ID)
		assert.Equal(t, committed, got.Committed, "%s: a batch's tasks share their commit time", want.ID)
	}
	rows, err := raw(t, dbPath(t)).QueryContext(ctx, `SELECT task_id, typeof(output) FROM tasks WHERE run_id = 'r'`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var id, typ string
		require.NoError(t, rows.Scan(&id, &typ))
		want := "text"
		if id == "t7" {
			want = "null"
		}
		assert.Equal(t, want, typ, id)
	}
	require.NoError(t, rows.Err())
}
