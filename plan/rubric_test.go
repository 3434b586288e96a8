package plan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
)

func TestRubric(t *testing.T) {
	tests := []struct {
		name, src, want, problem string
	}{
		{"canonical", `{"tasks":[{"id":"a","input":"x","rubric":"  cites sources  "}]}`, "cites sources", ""},
		{"alias", `{"tasks":[{"id":"a","input":"x","judge_rubric":"cites sources"}]}`, "cites sources", ""},
		{"absent", `{"tasks":[{"id":"a","input":"x"}]}`, "", ""},
		{"not a string", `{"tasks":[{"id":"a","input":"x","rubric":["cites sources"]}]}`, "", "rubric must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := plan.Parse([]byte(tt.src))
			if tt.problem != "" {
				require.Error(t, err)
				assert.ErrorContains(t, err, tt.problem)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Tasks[0].Rubric)
			raw, err := p.Canonical()
			require.NoError(t, err)
			back, err := plan.Parse(raw)
			require.NoError(t, err)
			assert.Equal(t, tt.want, back.Tasks[0].Rubric, "canonical form %s", raw)
			if tt.want == "" {
				assert.NotContains(t, string(raw), "rubric")
			}
		})
	}
}

func TestRubricTooLarge(t *testing.T) {
	p := &plan.Plan{Tasks: []plan.Task{plan.NewTask("a", "x")}}
	p.Tasks[0].Rubric = "0123456789"
	lim := plan.DefaultLimits()
	lim.MaxInputBytes = 5
	_, err := p.DAG(plan.WithLimits(lim))
	require.ErrorIs(t, err, plan.ErrInvalid)
	assert.ErrorContains(t, err, "rubric is 10 bytes")
}
