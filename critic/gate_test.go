package critic_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/plan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseGate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want critic.Gate
	}{
		{"", critic.GateCritical}, // unset reads as the default
		{"critical", critic.GateCritical},
		{"warning", critic.GateWarning},
		{"info", critic.GateInfo},
		{"never", critic.GateNever},
	} {
		got, err := critic.ParseGate(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	_, err := critic.ParseGate("warnings")
	require.EqualError(t, err, `unknown gate "warnings"; use critical, warning, info or never`)
}

// TestGateRefuses reads the gates against reports whose worst issue is of
// each severity.
func TestGateRefuses(t *testing.T) {
	reports := map[string]critic.Report{}
	for name, counts := range map[string][3]int{"clean": {}, "info": {0, 0, 1}, "warning": {0, 1, 1}, "critical": {1, 1, 1}} {
		rep, err := critic.ReviewWith(context.Background(), clean(), &staticReviewer{issues: counted(counts[0], counts[1], counts[2])})
		require.NoError(t, err)
		reports[name] = rep
	}
	for _, tc := range []struct {
		gate    critic.Gate
		refuses []string
	}{
		{critic.GateNever, nil},
		{"", []string{"critical"}},
		{critic.GateCritical, []string{"critical"}},
		{critic.GateWarning, []string{"critical", "warning"}},
		{critic.GateInfo, []string{"critical", "info", "warning"}},
		{"bogus", []string{"critical"}}, // an unknown gate is the default, never more lenient
	} {
		t.Run(string(tc.gate), func(t *testing.T) {
			var got []string
			for _, name := range []string{"clean", "critical", "info", "warning"} {
				rep := reports[name]
				if tc.gate.Refuses(&rep) {
					got = append(got, name)
				}
			}
			assert.Equal(t, tc.refuses, got)
		})
	}
}

// TestHeuristicsAreNotCritical: a plan that runs as written, however
// wide or odd, has no critical issue, so the default gate lets it run.
func TestHeuristicsAreNotCritical(t *testing.T) {
	p := tasks("gate: Combine nothing", "w0: work", "w1: work", "w2: work", "w3: work", "w4: work", "w5: work",
		"w6: work", "w7: work", "w8: work", "w9: work", "w10: Search the web")
	p = gate(p, "gate")
	rep := critic.Review(p)
	require.Contains(t, checksOf(rep), critic.CheckParallelExplosion)
	require.Contains(t, checksOf(rep), critic.CheckGateWithoutInputs)
	assert.False(t, rep.Has(critic.Critical), "%s", format(rep))
	assert.False(t, critic.GateCritical.Refuses(&rep))
	assert.True(t, critic.GateWarning.Refuses(&rep))
	assert.Equal(t, "The plan has issues worth fixing; consider refining it.", rep.Summary)
}

// TestSummaryAgreesWithSeverity: whatever the score, a plan with a
// critical issue is said not to run, and only a plan without a warning
// is called good.
func TestSummaryAgreesWithSeverity(t *testing.T) {
	for crit := range 4 {
		for warn := range 4 {
			for info := range 6 {
				rep, err := critic.ReviewWith(context.Background(), clean(), &staticReviewer{issues: counted(crit, warn, info)})
				require.NoError(t, err)
				name := fmt.Sprintf("%dc%dw%di score %d: %s", crit, warn, info, rep.Score, rep.Summary)
				switch {
				case crit > 0:
					assert.Contains(t, rep.Summary, "cannot run", name)
				case warn > 0:
					assert.NotContains(t, rep.Summary, "good", name)
					assert.NotContains(t, rep.Summary, "cannot run", name)
				case info > 0:
					assert.NotContains(t, rep.Summary, "cannot run", name)
				default:
					assert.Equal(t, sumLooksGood, rep.Summary, name)
				}
			}
		}
	}
}

func TestNonblockingReview(t *testing.T) {
	review := func(critical bool, onFailure plan.Policy, dependents bool) *plan.Plan {
		specs := []string{"draft: Draft the notes", "review: Approve {{results.draft}}? <- draft"}
		if dependents {
			specs = append(specs, "publish: Publish {{results.draft}} <- draft review")
		}
		p := tasks(specs...)
		p.Tasks[1].Type, p.Tasks[1].Critical, p.Tasks[1].OnFailure = plan.TypeHumanReview, critical, onFailure
		return p
	}
	for _, tc := range []struct {
		name       string
		critical   bool
		onFailure  plan.Policy
		dependents bool
		field      string // "" when the check must not fire
	}{
		{"critical review blocks", true, plan.PolicyStop, true, ""},
		{"non-critical review with dependents", false, plan.PolicyStop, true, "critical"},
		{"critical review that skips", true, plan.PolicySkip, true, "on_failure"},
		{"non-critical review without dependents", false, plan.PolicyStop, false, ""},
		{"a rejection asks for a replan", false, plan.PolicyReplan, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found := issuesOf(critic.Review(review(tc.critical, tc.onFailure, tc.dependents)), critic.CheckNonblockingReview)
			if tc.field == "" {
				assert.Empty(t, found)
				return
			}
			require.Len(t, found, 1)
			assert.Equal(t, critic.Warning, found[0].Severity)
			assert.Equal(t, "review", found[0].TaskID)
			assert.Equal(t, tc.field, found[0].Field)
			assert.Contains(t, found[0].Message, "(publish) runs anyway")
			assert.NotEmpty(t, found[0].Recommendation)
		})
	}
}
