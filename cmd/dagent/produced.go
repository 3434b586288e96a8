package main

import (
	"fmt"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// produced says, for a completed run, how many of the tasks of p produced
// an output when some did not: their failures were skipped by their
// policies, and "completed" alone would hide that little or nothing came
// of the run. Empty when every task is done.
func produced(p *plan.Plan, res *runner.Result) string {
	done := 0
	for i := range p.Tasks {
		if t := res.Tasks[p.Tasks[i].ID]; t != nil && t.Status == runner.TaskDone {
			done++
		}
	}
	if done == len(p.Tasks) {
		return ""
	}
	return fmt.Sprintf(": %d of %d tasks produced output", done, len(p.Tasks))
}
