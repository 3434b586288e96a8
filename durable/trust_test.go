package durable_test

import (
	"context"
	"testing"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/runner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartRefusesAnUnsafeRunID(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	for _, id := range []string{"r\x1b]0;pwned\x07", "r\u202e1", "a/../b"} {
		_, err := durable.Start(context.Background(), s, durable.Spec{Plan: mustPlan(t, chain)}, durable.WithAgent("wc", w.agent()), durable.WithRunID(id))
		assert.ErrorIs(t, err, runner.ErrInvalidRunID, "%q", id)
	}
	assert.Zero(t, w.total(), "nothing ran")
	runs, err := s.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, runs, "nothing was journaled")
}
