package executor

import (
	"context"

	"github.com/dagent-dev/dagent/plan"
)

// Journal makes each plan of an execution durable before it runs: the
// plan it starts with, version 0, and each repair it adopts, version k for
// the k-th. An error ends the execution failed with that error, the plan
// not run: an execution must not run a plan it could not find again when
// it resumes.
type Journal interface {
	CommitPlan(ctx context.Context, c PlanCommit) error
}

// PlanCommit is a plan of an execution, as the journal records it.
type PlanCommit struct {
	// RunID is the execution's base id; the plan runs under RunID for
	// version 0 and RunID.k for version k.
	RunID   string
	Version int
	Plan    *plan.Plan
	// Trial is the repair that made the plan; nil for version 0.
	Trial *Trial
}
