// Package temporal is groundwork for running dagent plans on Temporal.
//
// It lives in its own Go module (github.com/dagent-dev/dagent/temporal) so
// that importers of the core dagent module never link the Temporal SDK.
// For now it holds a toy: [RunPlan], a workflow that runs a list of tasks
// with dependencies as [RunTask] activities, each task once all of its
// dependencies have finished. It proves the toolchain (the SDK's test
// environment, the workflow replayer and a dev server), not the feature.
package temporal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Task is one node of a plan: an id and the ids of the tasks it waits on.
type Task struct {
	ID   string   `json:"id"`
	Deps []string `json:"deps,omitempty"`
}

// TaskInput is what [RunTask] is given: the task's id and the outputs of
// its dependencies, in the order of the task's Deps.
type TaskInput struct {
	ID     string   `json:"id"`
	Inputs []string `json:"inputs,omitempty"`
}

// Result is the output of one task.
type Result struct {
	ID     string `json:"id"`
	Output string `json:"output"`
}

// RunTask is the activity that runs one task. The toy output names the
// task and the outputs it was given: "b(a)" for task b after a.
func RunTask(ctx context.Context, in TaskInput) (string, error) {
	return in.ID + "(" + strings.Join(in.Inputs, ",") + ")", nil
}

// RunPlan is the workflow: it runs the tasks in waves, each wave being the
// tasks whose dependencies have all finished, started together in the order
// of the plan. It returns the results in the order the tasks finished their
// wave (wave by wave, plan order within a wave). A plan with an unknown
// dependency, a duplicate id or a cycle fails without running anything.
func RunPlan(ctx workflow.Context, tasks []Task) ([]Result, error) {
	waves, err := Waves(tasks)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidPlan", err)
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
	})
	outputs := make(map[string]string, len(tasks))
	results := make([]Result, 0, len(tasks))
	for _, wave := range waves {
		futures := make([]workflow.Future, len(wave))
		for i, t := range wave {
			in := TaskInput{ID: t.ID}
			for _, d := range t.Deps {
				in.Inputs = append(in.Inputs, outputs[d])
			}
			futures[i] = workflow.ExecuteActivity(ctx, RunTask, in)
		}
		for i, f := range futures {
			var out string
			if err := f.Get(ctx, &out); err != nil {
				return results, fmt.Errorf("task %s: %w", wave[i].ID, err)
			}
			outputs[wave[i].ID] = out
			results = append(results, Result{ID: wave[i].ID, Output: out})
		}
	}
	return results, nil
}

// Waves orders the tasks into waves: the first holds the tasks without
// dependencies, each next one the tasks whose dependencies are all in
// earlier waves. Within a wave, tasks keep the order of the plan, so the
// result is deterministic, as a workflow needs.
func Waves(tasks []Task) ([][]Task, error) {
	index := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		if t.ID == "" {
			return nil, fmt.Errorf("a task has no id")
		}
		if index[t.ID] {
			return nil, fmt.Errorf("task %s appears twice", t.ID)
		}
		index[t.ID] = true
	}
	for _, t := range tasks {
		for _, d := range t.Deps {
			if !index[d] {
				return nil, fmt.Errorf("task %s depends on unknown task %s", t.ID, d)
			}
		}
	}
	done := make(map[string]bool, len(tasks))
	var waves [][]Task
	for len(done) < len(tasks) {
		var wave []Task
		for _, t := range tasks {
			if done[t.ID] {
				continue
			}
			ready := true
			for _, d := range t.Deps {
				if !done[d] {
					ready = false
					break
				}
			}
			if ready {
				wave = append(wave, t)
			}
		}
		if len(wave) == 0 {
			var left []string
			for _, t := range tasks {
				if !done[t.ID] {
					left = append(left, t.ID)
				}
			}
			return nil, fmt.Errorf("the dependencies of tasks %s form a cycle", strings.Join(left, ", "))
		}
		for _, t := range wave {
			done[t.ID] = true
		}
		waves = append(waves, wave)
	}
	return waves, nil
}
