package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

func TestCheckRunID(t *testing.T) {
	tests := []struct {
		id, err string // err: "" for a valid id
	}{
		{id: "20250101T120000-1a2b3c4d"},
		{id: "nightly.v2:shard_3-A"},
		{id: strings.Repeat("a", runner.MaxRunIDLength)},
		{id: "", err: "invalid run id: the id is empty"},
		{id: strings.Repeat("a", runner.MaxRunIDLength+1), err: "invalid run id: the id is 129 bytes, over the limit of 128"},
		{id: "x\x1b]0;pwned\x07", err: `invalid run id: "x\x1b]0;pwned\a" holds '\x1b'; use letters, digits and . _ : -`},
		{id: "run\u202e1", err: `invalid run id: "run\u202e1" holds '\u202e'; use letters, digits and . _ : -`},
		{id: "a/b", err: `invalid run id: "a/b" holds '/'; use letters, digits and . _ : -`},
		{id: "a b", err: `invalid run id: "a b" holds ' '; use letters, digits and . _ : -`},
		{id: "é", err: `invalid run id: "é" holds 'é'; use letters, digits and . _ : -`},
	}
	for _, tt := range tests {
		err := runner.CheckRunID(tt.id)
		if tt.err == "" {
			assert.NoError(t, err, "%q", tt.id)
			continue
		}
		assert.ErrorIs(t, err, runner.ErrInvalidRunID, "%q", tt.id)
		assert.EqualError(t, err, tt.err)
	}
}

func TestRunRefusesAnUnsafeRunID(t *testing.T) {
	p, err := plan.Parse([]byte(`{"tasks": [{"id": "a", "agent": "echo"}]}`))
	require.NoError(t, err)
	ran := false
	echo := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		ran = true
		return agent.Result{}, nil
	})
	rn := runner.New(runner.WithAgent("echo", echo))
	_, err = rn.RunPlan(context.Background(), p, runner.WithRunID("a\x1b[2J"))
	assert.ErrorIs(t, err, runner.ErrInvalidOption)
	assert.ErrorIs(t, err, runner.ErrInvalidRunID)
	assert.False(t, ran, "nothing runs")

	// The ids an executor derives may pass the length a host names.
	res, err := rn.RunPlan(context.Background(), p, runner.WithRunID(strings.Repeat("a", runner.MaxRunIDLength)+".12"))
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
}

func ExampleCheckRunID() {
	for _, id := range []string{"nightly-2025.01.01", "nightly\x1b]0;pwned\x07"} {
		if err := runner.CheckRunID(id); err != nil {
			fmt.Println(errors.Is(err, runner.ErrInvalidRunID), err)
			continue
		}
		fmt.Println("ok", id)
	}
	// Output:
	// ok nightly-2025.01.01
	// true invalid run id: "nightly\x1b]0;pwned\a" holds '\x1b'; use letters, digits and . _ : -
}
