package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name     string
		outcomes []store.TaskOutcome
		want     *metaplanner.Memory
	}{
		{"none", nil, &metaplanner.Memory{}},
		{"counts", []store.TaskOutcome{
			{RunID: "r1", TaskID: "a", Agent: "scraper", Status: "done"},
			{RunID: "r1", TaskID: "b", Agent: "scraper", Status: "failed", Class: "timeout"},
			{RunID: "r2", TaskID: "a", Agent: "scraper", Status: "failed", Class: "timeout"},
			{RunID: "r2", TaskID: "c", Agent: "scraper", Status: "failed", Class: "agent_error"},
			{RunID: "r2", TaskID: "d", Agent: "scraper", Status: "failed"},
			{RunID: "r2", TaskID: "w", Agent: "writer", Tools: []string{"search", "fetch"}, Status: "done"},
			{RunID: "r3", TaskID: "w", Agent: "writer", Tools: []string{"search"}, Status: "failed", Class: "tool_refused"},
			{RunID: "r3", TaskID: "s", Agent: "writer", Status: "skipped"},
			{RunID: "r3", TaskID: "h", Status: "done"},
		}, &metaplanner.Memory{
			Runs: 3,
			Agents: []metaplanner.Fared{
				{Name: "scraper", Done: 1, Failed: 4, Classes: []metaplanner.ClassCount{{Class: "timeout", Count: 2}, {Class: "agent_error", Count: 1}}},
				{Name: "writer", Done: 1, Failed: 1, Classes: []metaplanner.ClassCount{{Class: "tool_refused", Count: 1}}},
			},
			Tools: []metaplanner.Fared{
				{Name: "fetch", Done: 1},
				{Name: "search", Done: 1, Failed: 1, Classes: []metaplanner.ClassCount{{Class: "tool_refused", Count: 1}}},
			},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, store.Summarize(tc.outcomes))
		})
	}
}

// Outcomes reads how the tasks of the newest runs ended; Summarize turns
// them into the memory a planner is given.
func ExampleSummarize() {
	dir, _ := os.MkdirTemp("", "dagent")
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(filepath.Join(dir, "runs.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx := context.Background()
	_ = s.CreateRun(ctx, store.Run{ID: "r1", Plan: json.RawMessage(`{"tasks": [{"id": "fetch", "agent": "scraper", "input": "x"}]}`)})
	_ = s.CommitBatch(ctx, "r1", store.Batch{
		Tasks:  []store.Task{{ID: "fetch", Status: "failed", Error: "too slow"}},
		Events: []store.Event{{Kind: "task_failed", TaskID: "fetch", Data: json.RawMessage(`{"class": "timeout"}`)}},
	})
	outcomes, err := s.Outcomes(ctx, 20)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(store.Summarize(outcomes))
	// Output:
	// Over the last 1 runs:
	// - agent scraper: 0 of 1 tasks done (0%); failures: timeout x1
}
