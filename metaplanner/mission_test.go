package metaplanner_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/metaplanner"
)

// A plan keeps the mission the model wrote, and gets the one it was asked
// about when the model wrote none, so that it can be repaired later.
func TestPlanKeepsTheMission(t *testing.T) {
	tests := []struct {
		name, answer, want string
	}{
		{"the model's mission", `{"mission": "Say hello", "tasks": [{"id": "greet", "input": "Say hello"}]}`, "Say hello"},
		{"no mission", `{"tasks": [{"id": "greet", "input": "Say hello"}]}`, "Greet the user\nin French"},
		{"a blank mission", `{"mission": "  ", "tasks": [{"id": "greet", "input": "Say hello"}]}`, "Greet the user\nin French"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(planAnswer(tt.answer))
			res, err := metaplanner.New(s.client()).Plan(context.Background(), "Greet the user\nin French")
			require.NoError(t, err)
			require.NotNil(t, res.Plan)
			assert.Equal(t, tt.want, res.Plan.Mission)
		})
	}
}

// A repair plan without a mission gets the mission it was repaired toward:
// the one given, else the failed plan's.
func TestReplanKeepsTheMission(t *testing.T) {
	tests := []struct {
		name, mission, want string
	}{
		{"given", "Compare this week's papers", "Compare this week's papers"},
		{"the failed plan's", "", ran(t).Mission},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NotEmpty(t, tt.want)
			noMission := strings.Replace(repairPlan, `"mission": "Compare GNN papers", `, "", 1)
			require.NotEqual(t, repairPlan, noMission)
			s := newScript(planAnswer(noMission))
			res, err := metaplanner.New(s.client()).Replan(context.Background(), tt.mission, completed(), failure(t), nil)
			require.NoError(t, err)
			require.NotNil(t, res.Plan)
			assert.Equal(t, tt.want, res.Plan.Mission)
		})
	}
}
