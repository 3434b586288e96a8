package main

import (
	"fmt"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
)

// refusal is the line that heads the findings of a refused plan, and the
// least severity of the findings to print under it.
func refusal(refused *executor.RefusedError) (string, critic.Severity) {
	rep := refused.Report
	what, min := prose.Plural(rep.Count(critic.Critical), "critical issue"), critic.Warning
	if sev := refused.Gate.Severity(); sev != "" && sev != critic.Critical && !rep.Has(critic.Critical) {
		n := 0
		for _, is := range rep.Issues {
			if is.Severity.AtLeast(sev) {
				n++
			}
		}
		what = fmt.Sprintf("%s at --gate %s", prose.Plural(n, "issue"), refused.Gate)
		min = sev
	}
	return fmt.Sprintf("the critic refused the plan (score %d/10, %s); nothing ran", rep.Score, what), min
}
