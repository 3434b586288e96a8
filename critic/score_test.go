package critic_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/plan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Summaries by band, as report.go words them.
const (
	sumLooksGood  = "The plan looks good: no issues found."
	sumGood       = "The plan is good."
	sumAcceptable = "The plan is acceptable, with minor issues."
	sumConsider   = "The plan has issues worth fixing; consider refining it."
	sumSerious    = "The plan has serious issues; refinement is strongly recommended."
	// A plan with a critical issue is never called acceptable.
	sumCannotRun        = "The plan cannot run as written; fix its critical issues first."
	sumCannotRunSerious = "The plan cannot run as written and has serious issues; fix the critical ones first."
)

func TestScore(t *testing.T) {
	for _, tc := range []struct {
		crit, warn, info int
		want             int
	}{
		{0, 0, 0, 10},
		{0, 0, 1, 10}, // 9.5 rounds half away from zero
		{0, 1, 0, 9},
		{0, 0, 2, 9},
		{0, 0, 3, 9}, // 8.5
		{0, 2, 0, 8},
		{0, 1, 3, 8}, // 7.5
		{1, 0, 0, 7},
		{1, 0, 1, 7}, // 6.5
		{0, 4, 0, 6},
		{1, 1, 0, 6},
		{0, 4, 1, 6}, // 5.5
		{1, 1, 1, 6}, // 5.5
		{2, 0, 0, 4},
		{2, 0, 1, 4}, // 3.5
		{2, 1, 0, 3},
		{2, 1, 1, 3}, // 2.5
		{0, 8, 0, 2},
		{0, 8, 1, 2}, // 1.5
		{3, 0, 0, 1},
		{0, 9, 1, 1}, // 0.5 rounds to 1
		{0, 0, 20, 1},
		{4, 0, 0, 1}, // −2, floored at 1
		{100, 100, 100, 1},
	} {
		assert.Equal(t, tc.want, critic.Score(tc.crit, tc.warn, tc.info), "Score(%d, %d, %d)", tc.crit, tc.warn, tc.info)
	}
}

// staticReviewer returns canned issues, and remembers what it was given.
type staticReviewer struct {
	issues []critic.Issue
	err    error

	ctx    context.Context
	plan   *plan.Plan
	static critic.Report
	calls  int
}

func (s *staticReviewer) Review(ctx context.Context, p *plan.Plan, static critic.Report) ([]critic.Issue, error) {
	s.ctx, s.plan, s.static = ctx, p, static
	s.calls++
	return s.issues, s.err
}

// counted makes crit critical, warn warning and info info issues about
// the plan as a whole.
func counted(crit, warn, info int) []critic.Issue {
	var out []critic.Issue
	add := func(n int, sev critic.Severity) {
		for i := range n {
			out = append(out, critic.Issue{Check: "llm", Severity: sev, Message: fmt.Sprintf("%s %d", sev, i), Recommendation: fmt.Sprintf("fix %s %d", sev, i)})
		}
	}
	add(crit, critic.Critical)
	add(warn, critic.Warning)
	add(info, critic.Info)
	return out
}

// clean is a plan without issues.
func clean() *plan.Plan { return tasks("draft: Draft the announcement") }

// TestSummaryBands reviews a clean plan with reviewer issues in counts that
// put the score on the edges of the summary bands.
func TestSummaryBands(t *testing.T) {
	require.Empty(t, critic.Review(clean()).Issues)
	for _, tc := range []struct {
		crit, warn, info int
		score            int
		summary          string
	}{
		{0, 0, 0, 10, sumLooksGood},
		{0, 0, 1, 10, sumGood},      // 9.5 → 10, but there is an issue
		{0, 1, 0, 9, sumAcceptable}, // a warning is never good
		{0, 0, 3, 9, sumGood},       // 8.5 → 9: good, not merely acceptable
		{0, 0, 4, 8, sumAcceptable},
		{0, 2, 0, 8, sumAcceptable},
		{1, 0, 0, 7, sumCannotRun}, // a critical issue is never acceptable
		{1, 0, 1, 7, sumCannotRun},
		{0, 4, 0, 6, sumConsider},
		{1, 1, 0, 6, sumCannotRun},
		{2, 0, 1, 4, sumCannotRun},
		{2, 0, 0, 4, sumCannotRun},
		{0, 7, 0, 3, sumSerious},
		{2, 1, 0, 3, sumCannotRunSerious},
		{3, 0, 0, 1, sumCannotRunSerious},
		{5, 5, 5, 1, sumCannotRunSerious},
	} {
		t.Run(fmt.Sprintf("%dc%dw%di", tc.crit, tc.warn, tc.info), func(t *testing.T) {
			rep, err := critic.ReviewWith(context.Background(), clean(), &staticReviewer{issues: counted(tc.crit, tc.warn, tc.info)})
			require.NoError(t, err)
			assert.Equal(t, tc.crit, rep.Count(critic.Critical))
			assert.Equal(t, tc.warn, rep.Count(critic.Warning))
			assert.Equal(t, tc.info, rep.Count(critic.Info))
			assert.Equal(t, tc.score, rep.Score)
			assert.Equal(t, tc.summary, rep.Summary)
		})
	}
}

func TestRecommendations(t *testing.T) {
	issues := []critic.Issue{
		{Check: "c1", Severity: critic.Critical, Message: "m", Recommendation: "Do A."},
		{Check: "c2", Severity: critic.Warning, Message: "m", Recommendation: "Do B."},
		{Check: "c3", Severity: critic.Info, Message: "m", Recommendation: "Do C."},    // info: left out
		{Check: "c4", Severity: critic.Warning, Message: "m", Recommendation: "Do A."}, // repeated
		{Check: "c5", Severity: critic.Warning, Message: "m"},                          // none
		{Check: "c6", Severity: critic.Info, Message: "m", Recommendation: "Do B."},
		{Check: "c7", Severity: critic.Critical, Message: "m", Recommendation: "Do D."},
	}
	// The reviewer hands them over in reverse; the report sorts them.
	rev := slices.Clone(issues)
	slices.Reverse(rev)
	rep, err := critic.ReviewWith(context.Background(), clean(), &staticReviewer{issues: rev})
	require.NoError(t, err)
	assert.Equal(t, []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7"}, checksOf(rep))
	assert.Equal(t, []string{"Do A.", "Do B.", "Do D."}, rep.Recommendations)

	onlyInfo, err := critic.ReviewWith(context.Background(), clean(), &staticReviewer{issues: counted(0, 0, 2)})
	require.NoError(t, err)
	assert.Empty(t, onlyInfo.Recommendations)
	assert.Empty(t, critic.Review(clean()).Recommendations)
}

// messy is a plan with issues on most of its tasks and on the plan itself.
func messy() *plan.Plan {
	p := tasks(
		"find: Search the web for vendors",                     // optimism_bias
		"a: List the prices",                                   //
		"b: List the terms",                                    //
		"c: List the reviews <- find",                          // disconnected_flow
		"cmp: Compare {{results.a}} and {{results.zz}} <- a b", // template_not_upstream, disconnected_flow info
		"pick: Pick one from {{results.cmp}} <- cmp c",         // disconnected_flow info
	)
	p.Agents = map[string]plan.Agent{"analyst": {Tools: []string{"shell"}}}
	p.Tasks[1].Agent = "analyst"
	p.Tasks[2].Verification = "(count data/result"
	p.Tasks[3].OnFailure, p.Tasks[3].MaxRetries = plan.PolicyRetry, 0
	p.Tasks[5].Agent = "chooser"
	return p
}

// shuffled returns p with its tasks in a random order.
func shuffled(p *plan.Plan, r *rand.Rand) *plan.Plan {
	q := *p
	q.Tasks = slices.Clone(p.Tasks)
	r.Shuffle(len(q.Tasks), func(i, j int) { q.Tasks[i], q.Tasks[j] = q.Tasks[j], q.Tasks[i] })
	return &q
}

// assertPlanOrder checks that the issues come plan-level first, then by
// the task's position in p, then by check.
func assertPlanOrder(t *testing.T, p *plan.Plan, rep critic.Report) {
	t.Helper()
	pos := make(map[string]int, len(p.Tasks))
	for i, task := range p.Tasks {
		pos[task.ID] = i
	}
	key := func(is critic.Issue) int {
		if i, ok := pos[is.TaskID]; ok {
			return i
		}
		return -1
	}
	for k := 1; k < len(rep.Issues); k++ {
		a, b := rep.Issues[k-1], rep.Issues[k]
		require.LessOrEqual(t, key(a), key(b), "issue %d (%v) comes after %v", k, b, a)
		if key(a) == key(b) {
			require.LessOrEqual(t, a.Check, b.Check, "issue %d (%v) comes after %v", k, b, a)
		}
	}
}

func TestStableOrder(t *testing.T) {
	opts := []critic.Option{critic.WithCatalog(toolCatalog{"search"})}
	base := critic.Review(messy(), opts...)
	require.Greater(t, len(base.Issues), 8, "%s", format(base))
	assertPlanOrder(t, messy(), base)
	assert.Equal(t, base, critic.Review(messy(), opts...), "the same plan gives the same report")
	assert.Equal(t, format(base), format(critic.Review(messy(), opts...)))

	bySeverity := func(rep critic.Report) []string {
		var out []string
		for _, is := range rep.Issues {
			out = append(out, fmt.Sprintf("%s %s", is.Check, is.Severity))
		}
		slices.Sort(out)
		return out
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		p := shuffled(messy(), r)
		rep := critic.Review(p, opts...)
		assertPlanOrder(t, p, rep)
		assert.Equal(t, bySeverity(base), bySeverity(rep), "the same findings in any task order")
		assert.Equal(t, base.Score, rep.Score)
		assert.Equal(t, rep, critic.Review(p, opts...))
	}
}

func TestParseSeverity(t *testing.T) {
	for _, s := range []critic.Severity{critic.Critical, critic.Warning, critic.Info} {
		got, err := critic.ParseSeverity(string(s))
		require.NoError(t, err)
		assert.Equal(t, s, got)
	}
	for _, s := range []string{"", "error", "Critical", " warning"} {
		_, err := critic.ParseSeverity(s)
		require.Error(t, err, "%q", s)
		assert.Contains(t, err.Error(), "use critical, warning or info")
	}
}

func TestAtLeast(t *testing.T) {
	order := []critic.Severity{critic.Info, critic.Warning, critic.Critical}
	for i, s := range order {
		for j, u := range order {
			assert.Equal(t, i >= j, s.AtLeast(u), "%s.AtLeast(%s)", s, u)
		}
	}
	for _, u := range order {
		assert.False(t, critic.Severity("bogus").AtLeast(u), "an unknown severity is not at least %s", u)
		assert.False(t, u.AtLeast("bogus"), "nothing is at least an unknown severity")
	}
}

func TestHasAndCount(t *testing.T) {
	var empty critic.Report
	for _, s := range []critic.Severity{critic.Critical, critic.Warning, critic.Info} {
		assert.False(t, empty.Has(s))
		assert.Zero(t, empty.Count(s))
	}
	rep, err := critic.ReviewWith(context.Background(), clean(), &staticReviewer{issues: counted(0, 2, 3)})
	require.NoError(t, err)
	assert.False(t, rep.Has(critic.Critical))
	assert.True(t, rep.Has(critic.Warning))
	assert.True(t, rep.Has(critic.Info))
	assert.Equal(t, 0, rep.Count(critic.Critical))
	assert.Equal(t, 2, rep.Count(critic.Warning))
	assert.Equal(t, 3, rep.Count(critic.Info))

	infoOnly, err := critic.ReviewWith(context.Background(), clean(), &staticReviewer{issues: counted(0, 0, 1)})
	require.NoError(t, err)
	assert.False(t, infoOnly.Has(critic.Warning))
	assert.True(t, infoOnly.Has(critic.Info))
}
