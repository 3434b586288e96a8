package critic

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/stretchr/testify/require"
)

// FuzzReviewSource checks that ReviewSource never panics, that the score
// is within 1..10 and follows from the counts, that the issues are sorted
// and placed under the task they name, and that the report is the same
// twice. The seed corpus is testdata/fuzz/FuzzReviewSource, plus the plans
// of the golden tests.
func FuzzReviewSource(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "checks", "*", "*.json"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(data)
	}
	reg := registry.New()
	noop := agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{}, nil })
	require.NoError(f, reg.Register("scraper", registry.Worker{Outputs: []string{"items"}, Agent: noop}))
	require.NoError(f, reg.RegisterTool("search", registry.Tool{Run: func(context.Context, json.RawMessage) (string, error) { return "", nil }}))
	withHost := []Option{WithCatalog(reg)}

	f.Fuzz(func(t *testing.T, data []byte) {
		p, _ := plan.Parse(data)
		for _, opts := range [][]Option{nil, withHost} {
			rep := ReviewSource(data, opts...)
			checkReport(t, p, rep)
			require.True(t, reflect.DeepEqual(rep, ReviewSource(data, opts...)), "the same source gives the same report")
		}
	})
}

// checkReport checks what holds of every report.
func checkReport(t *testing.T, p *plan.Plan, rep Report) {
	t.Helper()
	require.GreaterOrEqual(t, rep.Score, 1)
	require.LessOrEqual(t, rep.Score, 10)
	crit, warn, info := rep.Count(Critical), rep.Count(Warning), rep.Count(Info)
	require.Equal(t, len(rep.Issues), crit+warn+info, "every issue has a known severity")
	if rep.Summary == NoPlan {
		require.Equal(t, 1, rep.Score, "no plan scores the lowest")
		require.Positive(t, crit, "no plan is a critical problem")
		require.Equal(t, crit, len(rep.Issues), "nothing can run: every issue is critical")
	} else {
		require.Equal(t, Score(crit, warn, info), rep.Score)
	}
	require.NotEmpty(t, rep.Summary)
	if len(rep.Issues) == 0 {
		require.Equal(t, 10, rep.Score)
	}

	require.True(t, slices.IsSortedFunc(rep.Issues, func(a, b Issue) int {
		return cmp.Or(cmp.Compare(a.order, b.order), cmp.Compare(a.Check, b.Check))
	}), "issues sorted by task, then check: %v", rep.Issues)
	for _, is := range rep.Issues {
		require.NotEmpty(t, is.Check)
		require.NotEmpty(t, is.Message)
		if is.order < 0 {
			continue
		}
		require.NotNil(t, p)
		require.Less(t, is.order, len(p.Tasks))
		id := p.Tasks[is.order].ID
		if id == "" {
			id = "#" + strconv.Itoa(is.order+1)
		}
		require.Equal(t, id, is.TaskID, "issue %v placed under task %d", is, is.order)
		// Tasks sit in source order, so an issue at a known place lies
		// between its task's start and the next task's.
		if start := p.Tasks[is.order].Pos; is.Pos.IsValid() && start.IsValid() {
			require.False(t, posBefore(is.Pos, start), "issue %v at %s, before its task at %s", is, is.Pos, start)
			if next := is.order + 1; next < len(p.Tasks) && p.Tasks[next].Pos.IsValid() {
				require.True(t, posBefore(is.Pos, p.Tasks[next].Pos), "issue %v at %s, after the next task at %s", is, is.Pos, p.Tasks[next].Pos)
			}
		}
	}

	seen := make(map[string]bool)
	for _, r := range rep.Recommendations {
		require.False(t, seen[r], "recommendation %q twice", r)
		seen[r] = true
		require.True(t, slices.ContainsFunc(rep.Issues, func(is Issue) bool {
			return is.Recommendation == r && is.Severity.AtLeast(Warning)
		}), "recommendation %q of no critical or warning issue", r)
	}
}

// posBefore reports whether a comes before b.
func posBefore(a, b plan.Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
}
