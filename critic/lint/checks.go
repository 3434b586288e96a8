package lint

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/dagent-dev/dagent/critic"
)

// allChecks stands for every check that may be disabled, in enable,
// disable and exclude lists.
const allChecks = "all"

// The errors a [*CheckError] matches.
var (
	// ErrUnknownCheck is a name that is no check of [critic.Rules].
	ErrUnknownCheck = errors.New("unknown check")
	// ErrFixedCheck is a check of a problem that keeps a plan from
	// running: it may be neither disabled nor excluded.
	ErrFixedCheck = errors.New("check cannot be disabled")
)

// CheckError is a check name that an enable, disable or exclude list
// cannot hold.
type CheckError struct {
	Name string
	Err  error // [ErrUnknownCheck] or [ErrFixedCheck]
}

func (e *CheckError) Error() string {
	if e.Err == ErrFixedCheck {
		return fmt.Sprintf("check %q cannot be disabled: a plan with it does not run", e.Name)
	}
	return fmt.Sprintf("unknown check %q; the checks are listed in docs/lint.md", e.Name)
}

func (e *CheckError) Unwrap() error { return e.Err }

// fixedCategories are the rule categories whose checks cannot be
// disabled: a plan with such an issue does not run at all, and a runner
// refuses it whatever lint says, as golangci-lint will not disable
// typecheck. unknown_key is of the parse category but the plan runs
// without the key, so it may be disabled.
var fixedCategories = []string{"parse", "structure", "limits"}

// fixed reports whether the check of rule r cannot be disabled.
func fixed(r critic.Rule) bool {
	return slices.Contains(fixedCategories, r.Category) && r.Check != critic.CheckUnknownKey
}

// expandCheck is the checks a name in a list stands for: itself, or every
// check that may be disabled for "all".
func expandCheck(name string) ([]string, error) {
	if name == allChecks {
		var names []string
		for _, r := range critic.Rules() {
			if !fixed(r) {
				names = append(names, r.Check)
			}
		}
		return names, nil
	}
	r, ok := critic.Describe(name)
	if !ok {
		return nil, &CheckError{Name: name, Err: ErrUnknownCheck}
	}
	if fixed(r) {
		return nil, &CheckError{Name: name, Err: ErrFixedCheck}
	}
	return []string{name}, nil
}

// rules are the settings of one plan file: the configuration file's,
// then the caller's.
type rules struct {
	disabled  map[string]bool
	failOn    critic.Gate
	maxIssues int
	exclude   []excludeIn
}

// excludeIn is an exclude rule and the directory its path is relative
// to.
type excludeIn struct {
	Exclude
	dir string
}

// apply adds s, whose exclude paths are relative to dir, over r. Its
// names were checked.
func (r *rules) apply(s *Settings, dir string) {
	for _, list := range []struct {
		names []string
		off   bool
	}{{s.Disable, true}, {s.Enable, false}} {
		for _, name := range list.names {
			names, _ := expandCheck(name)
			for _, n := range names {
				r.disabled[n] = list.off
			}
		}
	}
	if s.FailOn != "" {
		r.failOn = s.FailOn
	}
	if s.MaxIssues != nil {
		r.maxIssues = *s.MaxIssues
	}
	for _, e := range s.Exclude {
		r.exclude = append(r.exclude, excludeIn{e, dir})
	}
}

// silenced reports whether the issue is not to be reported in the plan at
// path: its check is disabled, or an exclude rule covers it.
func (r *rules) silenced(path string, is critic.Issue) bool {
	if r.disabled[is.Check] {
		return true
	}
	if rule, ok := critic.Describe(is.Check); ok && fixed(rule) {
		return false
	}
	for _, e := range r.exclude {
		if e.Task != "" && e.Task != is.TaskID {
			continue
		}
		if !slices.Contains(e.Checks, is.Check) && !slices.Contains(e.Checks, allChecks) {
			continue
		}
		if e.Path == "" || matches(e.dir, e.Path, path) {
			return true
		}
	}
	return false
}

// matches reports whether the plan at path matches pattern, relative to
// dir.
func matches(dir, pattern, path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return false
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		return false
	}
	ok, _ := filepath.Match(filepath.FromSlash(pattern), rel)
	return ok
}

// capIssues keeps the first max issues of rep, the worst first, in
// report order, and returns how many it left out. The score, summary and
// the gate's verdict stay those of every issue.
func capIssues(rep *critic.Report, max int) int {
	if max <= 0 || len(rep.Issues) <= max {
		return 0
	}
	rank := map[critic.Severity]int{critic.Critical: 0, critic.Warning: 1, critic.Info: 2}
	idx := make([]int, len(rep.Issues))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return rank[rep.Issues[a].Severity] - rank[rep.Issues[b].Severity] })
	keep := idx[:max]
	slices.Sort(keep)
	kept := make([]critic.Issue, 0, max)
	for _, i := range keep {
		kept = append(kept, rep.Issues[i])
	}
	left := len(rep.Issues) - max
	rep.Issues = kept
	return left
}
