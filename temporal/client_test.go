package temporal

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
)

// startClient answers ExecuteWorkflow with err, keeping the options it
// was given.
type startClient struct {
	client.Client
	opts client.StartWorkflowOptions
	err  error
}

func (c *startClient) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	c.opts = opts
	return nil, c.err
}

func TestStartRefusesAnExistingRun(t *testing.T) {
	p, err := plan.Parse([]byte(`{"tasks":[{"id":"a","agent":"w"}]}`))
	require.NoError(t, err)
	spec := durable.Spec{Plan: p}
	tests := []struct {
		name   string
		err    error
		exists bool
	}{
		{"open or ended run of the id", serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", "r1-run"), true},
		{"other failure", errors.New("unavailable"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &startClient{err: tt.err}
			_, err := Start(context.Background(), c, "q", "r1", spec)
			require.Error(t, err)
			assert.Equal(t, tt.exists, errors.Is(err, ErrRunExists))
			assert.ErrorIs(t, err, tt.err)
			if tt.exists {
				assert.Contains(t, err.Error(), "run r1: ")
			}
			assert.Equal(t, "r1", c.opts.ID)
			assert.Equal(t, enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, c.opts.WorkflowIDReusePolicy)
			assert.True(t, c.opts.WorkflowExecutionErrorWhenAlreadyStarted)
		})
	}
}
