package critic

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/dagent-dev/dagent/plan"
)

// Severity ranks an issue.
type Severity string

// Severities, from the worst. Critical is kept for facts, never for
// heuristics: a finding is critical only when it is certain that the plan
// cannot run as written (a cycle, an unknown worker, a predicate that does
// not compile). What a heuristic suspects is a warning at most, so that a
// gate at [GateCritical] never refuses a plan that would run.
const (
	// Critical: the plan cannot run as written.
	Critical Severity = "critical"
	// Warning: the plan runs, but is likely fragile, wasteful or not what
	// was meant.
	Warning Severity = "warning"
	// Info: worth a look.
	Info Severity = "info"
)

// rank orders severities: a higher rank is worse.
func (s Severity) rank() int {
	switch s {
	case Critical:
		return 3
	case Warning:
		return 2
	case Info:
		return 1
	}
	return 0
}

// AtLeast reports whether s is as bad as t or worse; nothing is as bad as
// an unknown severity.
func (s Severity) AtLeast(t Severity) bool { return t.rank() > 0 && s.rank() >= t.rank() }

// ParseSeverity reads critical, warning or info.
func ParseSeverity(s string) (Severity, error) {
	switch v := Severity(s); v {
	case Critical, Warning, Info:
		return v, nil
	}
	return "", fmt.Errorf("unknown severity %q; use critical, warning or info", s)
}

// Issue is one finding.
type Issue struct {
	// Check names what found it: a check of this package, a plan
	// validation code, or a reviewer's own name.
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	// TaskID is the task the issue is about; empty for the plan as a whole.
	TaskID string `json:"task_id"`
	// Field is the task's field (or the plan's) the issue is about.
	Field   string `json:"field"`
	Message string `json:"message"`
	// Recommendation says how to fix it.
	Recommendation string `json:"recommendation"`
	// Pos is where the issue is in the source the plan was parsed from;
	// zero when unknown.
	Pos plan.Position `json:"-"`

	order int // the task's index in the plan, -1 for the plan
}

func (i Issue) String() string {
	where := "plan"
	if i.TaskID != "" {
		where = "task " + i.TaskID
	}
	if i.Field != "" {
		where += ": " + i.Field
	}
	return fmt.Sprintf("%s: %s: %s [%s]", i.Severity, where, i.Message, i.Check)
}

// Report is the outcome of a review. The zero Report holds no issue and no
// score: reports come from [Review], [ReviewDAG], [ReviewSource] and
// [ReviewWith].
type Report struct {
	// Score runs from 1 (do not run this) to 10 (no issues):
	// max(1, round(10 − 3·critical − 1·warning − 0.5·info)).
	Score int `json:"score"`
	// Summary is one sentence on the plan's state, by the worst severity
	// of its issues and the score: it never calls a plan with a critical
	// issue acceptable, nor one with no issue flawed.
	Summary string `json:"summary"`
	// Issues in a stable order: plan-level first, then by task in plan
	// order, then by check.
	Issues []Issue `json:"issues"`
	// Recommendations are the distinct recommendations of the critical and
	// warning issues, in issue order.
	Recommendations []string `json:"recommendations"`
}

// Count returns the number of issues of severity s.
func (r *Report) Count(s Severity) int {
	n := 0
	for _, i := range r.Issues {
		if i.Severity == s {
			n++
		}
	}
	return n
}

// Has reports whether an issue of severity s or worse was found.
func (r *Report) Has(s Severity) bool {
	return slices.ContainsFunc(r.Issues, func(i Issue) bool { return i.Severity.AtLeast(s) })
}

// finish sorts the issues and fills in the score, summary and
// recommendations.
func (r *Report) finish() {
	slices.SortStableFunc(r.Issues, func(a, b Issue) int {
		return cmp.Or(cmp.Compare(a.order, b.order), cmp.Compare(a.Check, b.Check), cmp.Compare(a.Field, b.Field), cmp.Compare(a.Message, b.Message))
	})
	crit, warn, info := r.Count(Critical), r.Count(Warning), r.Count(Info)
	r.Score = Score(crit, warn, info)
	r.Summary = summary(r.Score, r.worst())
	r.Recommendations = nil
	seen := make(map[string]bool)
	for _, i := range r.Issues {
		if (i.Severity == Critical || i.Severity == Warning) && i.Recommendation != "" && !seen[i.Recommendation] {
			seen[i.Recommendation] = true
			r.Recommendations = append(r.Recommendations, i.Recommendation)
		}
	}
}

// Score is max(1, round(10 − 3·critical − 1·warning − 0.5·info)), rounding
// half away from zero.
func Score(critical, warning, info int) int {
	return max(1, int(math.Round(10-3*float64(critical)-float64(warning)-0.5*float64(info))))
}

// worst is the worst severity of the issues, empty without issues.
func (r *Report) worst() Severity {
	var w Severity
	for _, i := range r.Issues {
		if i.Severity.rank() > w.rank() {
			w = i.Severity
		}
	}
	return w
}

// summary is the sentence of a report whose worst issue is of severity
// worst: the severity decides what the plan is, the score how far it is
// from good.
func summary(score int, worst Severity) string {
	switch {
	case worst.rank() == 0:
		return "The plan looks good: no issues found."
	case worst == Critical && score <= 3:
		return "The plan cannot run as written and has serious issues; fix the critical ones first."
	case worst == Critical:
		return "The plan cannot run as written; fix its critical issues first."
	case score <= 3:
		return "The plan has serious issues; refinement is strongly recommended."
	case score <= 6:
		return "The plan has issues worth fixing; consider refining it."
	case score <= 8 || worst == Warning:
		return "The plan is acceptable, with minor issues."
	}
	return "The plan is good."
}
