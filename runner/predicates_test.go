package runner_test

import (
	"context"
	"testing"

	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWithPredicatesSharesCompilations: the run takes its predicates from
// the set it is given, compiling there only those the set lacks, with the
// set's options.
func TestWithPredicatesSharesCompilations(t *testing.T) {
	noLeaks(t)
	src := `(= data/result "ok")`
	set := verify.NewSet()
	before, err := set.Compile(src)
	require.NoError(t, err)
	p := planOf(task("a", "x", verifies(src)), task("b", "y", verifies(src)), task("c", "z", verifies("true")))
	rec := newRecorder()
	res := run(t, p, rec, runner.WithPredicates(set))
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, 2, set.Len(), "the run compiled only the predicate the set lacked")
	after, err := set.Compile(src)
	require.NoError(t, err)
	assert.Same(t, before, after)

	tiny := verify.NewSet(verify.WithMaxNodes(2))
	_, err = runner.New(runner.WithAgent(worker, newRecorder())).RunPlan(context.Background(), p, runner.WithPredicates(tiny))
	var perr *runner.PredicateError
	require.ErrorAs(t, err, &perr, "the set's options apply to the run's predicates")
}
