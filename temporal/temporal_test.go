package temporal

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// diamond is a plan whose tasks are listed out of dependency order.
var diamond = []Task{
	{ID: "d", Deps: []string{"b", "c"}},
	{ID: "b", Deps: []string{"a"}},
	{ID: "c", Deps: []string{"a"}},
	{ID: "a"},
}

var diamondResults = []Result{
	{ID: "a", Output: "a()"},
	{ID: "b", Output: "b(a())"},
	{ID: "c", Output: "c(a())"},
	{ID: "d", Output: "d(b(a()),c(a()))"},
}

func TestRunPlanInTestEnvironment(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(RunTask)
	env.ExecuteWorkflow(RunPlan, diamond)
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var got []Result
	if err := env.GetWorkflowResult(&got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, diamondResults) {
		t.Fatalf("results:\n got %v\nwant %v", got, diamondResults)
	}
	env.AssertExpectations(t)
}

func TestRunPlanActivityFailure(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(RunTask)
	// b fails for good; d must not run. Once an activity is mocked, a call
	// no mock matches fails rather than falling through to the registered
	// activity, so one mock takes every call and runs RunTask but for b.
	env.OnActivity(RunTask, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in TaskInput) (string, error) {
			if in.ID == "b" {
				return "", temporal.NewNonRetryableApplicationError("b broke", "Broken", nil)
			}
			return RunTask(ctx, in)
		})
	ran := map[string]bool{}
	env.SetOnActivityStartedListener(func(_ *activity.Info, _ context.Context, args converter.EncodedValues) {
		var in TaskInput
		if err := args.Get(&in); err == nil {
			ran[in.ID] = true
		}
	})
	env.ExecuteWorkflow(RunPlan, diamond)
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "b broke") {
		t.Fatalf("workflow error = %v, want one naming b's failure", err)
	}
	if ran["d"] {
		t.Fatal("d ran after its dependency b failed")
	}
	if !ran["a"] || !ran["c"] {
		t.Fatalf("ran %v, want a and c", ran)
	}
}

func TestRunPlanInvalid(t *testing.T) {
	for name, tasks := range map[string][]Task{
		"cycle":   {{ID: "a", Deps: []string{"b"}}, {ID: "b", Deps: []string{"a"}}},
		"unknown": {{ID: "a", Deps: []string{"z"}}},
		"twice":   {{ID: "a"}, {ID: "a"}},
	} {
		t.Run(name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.RegisterActivity(RunTask)
			env.ExecuteWorkflow(RunPlan, tasks)
			err := env.GetWorkflowError()
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) || appErr.Type() != "InvalidPlan" {
				t.Fatalf("workflow error = %v, want an InvalidPlan application error", err)
			}
		})
	}
}
