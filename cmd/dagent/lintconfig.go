package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dagent-dev/dagent/critic"
)

// allChecks stands for every check that may be disabled, in enable and
// disable lists.
const allChecks = "all"

// fixedCategories are the rule categories whose checks cannot be
// disabled: a plan with such an issue does not run at all, and dagent run
// refuses it whatever lint says, as golangci-lint will not disable
// typecheck. unknown_key is of the parse category but the plan runs
// without the key, so it may be disabled.
var fixedCategories = []string{"parse", "structure", "limits"}

// fixed reports whether the check of rule r cannot be disabled.
func fixed(r critic.Rule) bool {
	return slices.Contains(fixedCategories, r.Category) && r.Check != critic.CheckUnknownKey
}

// checkSet is which checks lint reports: all but the disabled ones.
type checkSet map[string]bool // check → disabled

// apply disables, then enables, the named checks: "disable: [all],
// enable: [cycle]" keeps one check. where prefixes the list's name in
// errors ("--" for the flags).
func (s checkSet) apply(disable, enable []string, where string) error {
	for _, list := range []struct {
		names []string
		off   bool
		key   string
	}{{disable, true, "disable"}, {enable, false, "enable"}} {
		for _, name := range list.names {
			names, err := checkNames(name)
			if err != nil {
				return fmt.Errorf("%s%s: %w", where, list.key, err)
			}
			for _, n := range names {
				s[n] = list.off
			}
		}
	}
	return nil
}

// checkNames is the checks a name in a list stands for: itself, or every
// check that may be disabled for "all".
func checkNames(name string) ([]string, error) {
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
		return nil, fmt.Errorf("unknown check %q; the checks are listed in docs/lint.md", name)
	}
	if fixed(r) {
		return nil, fmt.Errorf("check %q cannot be disabled: a plan with it does not run", name)
	}
	return []string{name}, nil
}

// lintSettings is what lint applies to one plan file: the flags over its
// project configuration file.
type lintSettings struct {
	failOn    string
	maxIssues int // 0: no limit
	disabled  checkSet
	exclude   []excludeRule
	config    *projectConfig // nil: no configuration file
}

// settingsFor merges the configuration file found upward from the plan
// at path with the flags: a flag the user set wins over the file.
func settingsFor(cmd commandFlags, f lintFlags, cfg *projectConfig) (lintSettings, error) {
	s := lintSettings{failOn: f.failOn, maxIssues: f.maxIssues, disabled: checkSet{}, config: cfg}
	if cfg != nil {
		lc := cfg.Lint
		if err := s.disabled.apply(lc.Disable, lc.Enable, cfg.path+": lint: "); err != nil {
			return s, err
		}
		if lc.FailOn != "" && !cmd.Changed("fail-on") {
			s.failOn = lc.FailOn
		}
		if lc.MaxIssues != nil && !cmd.Changed("max-issues") {
			s.maxIssues = *lc.MaxIssues
		}
		for _, r := range lc.Exclude {
			if len(r.Checks) == 0 {
				return s, fmt.Errorf("%s: lint: exclude: a rule needs checks", cfg.path)
			}
			for _, name := range r.Checks {
				if _, err := checkNames(name); err != nil {
					return s, fmt.Errorf("%s: lint: exclude: %w", cfg.path, err)
				}
			}
			if _, err := filepath.Match(r.Path, ""); err != nil {
				return s, fmt.Errorf("%s: lint: exclude: bad path %q: %w", cfg.path, r.Path, err)
			}
		}
		s.exclude = lc.Exclude
	}
	if err := s.disabled.apply(f.disable, f.enable, "--"); err != nil {
		return s, err
	}
	if s.maxIssues < 0 {
		return s, errors.New("--max-issues must not be negative")
	}
	return s, nil
}

// commandFlags says whether the user set a flag.
type commandFlags interface {
	Changed(name string) bool
}

// silenced reports whether the issue is not to be reported in the plan at
// path: its check is disabled, or an exclude rule of the configuration
// file covers it.
func (s *lintSettings) silenced(path string, is critic.Issue) bool {
	if s.disabled[is.Check] {
		return true
	}
	if r, ok := critic.Describe(is.Check); ok && fixed(r) {
		return false
	}
	for _, r := range s.exclude {
		if r.Task != "" && r.Task != is.TaskID {
			continue
		}
		if !slices.Contains(r.Checks, is.Check) && !slices.Contains(r.Checks, allChecks) {
			continue
		}
		if r.Path == "" || s.matches(r.Path, path) {
			return true
		}
	}
	return false
}

// matches reports whether the plan at path matches pattern, relative to
// the configuration file's directory.
func (s *lintSettings) matches(pattern, path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(s.config.dir(), abs)
	if err != nil {
		return false
	}
	ok, _ := filepath.Match(filepath.FromSlash(pattern), rel)
	return ok
}

// capIssues keeps the first max issues of rep, the worst first, in
// report order, and returns how many it left out. The score, summary and
// exit status stay those of every issue.
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

// skipDirs are directories a recursive argument (dir/...) does not enter,
// beside those whose names start with "." or "_", as go build does.
var skipDirs = []string{"testdata", "node_modules", "vendor"}

// planFiles lists the plans of dir: its *.json files, and with recursive
// those of its subdirectories too. Valid JSON that is not a plan — its
// top level is not an object with a task list ("tasks", "steps",
// "workflow", "phases" or "plan") — is skipped, so that package.json and
// the like are not reviewed; a file that is not valid JSON is reviewed,
// as a plan with a syntax error.
func planFiles(dir string, recursive bool) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if path == dir {
				return nil
			}
			name := e.Name()
			if !recursive || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || slices.Contains(skipDirs, name) {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) == ".json" && isPlanFile(path) {
			paths = append(paths, path)
		}
		return nil
	})
	return paths, err
}

// planKeys are the top-level keys of a JSON object that make it a plan.
var planKeys = []string{"tasks", "steps", "workflow", "phases", "plan"}

// isPlanFile reports whether the JSON file at path looks like a plan.
func isPlanFile(path string) bool {
	info, err := os.Stat(path)
	if err != nil || info.Size() > maxPlanBytes {
		// Reviewed, to be reported: it cannot be read, or is too large.
		return true
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return true
	}
	var top map[string]json.RawMessage
	if !json.Valid(data) {
		// A plan with a syntax error is what lint is for.
		return true
	}
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	for _, k := range planKeys {
		if _, ok := top[k]; ok {
			return true
		}
	}
	return false
}
