// Package lint runs the critic over plan files as a CI linter does, the
// library behind `dagent lint`: it finds the plans among paths,
// directories and globs ([Expand]), reads the project's configuration
// file, .dagent.yaml ([FindConfig]), resolves each plan's registry
// ([RegistryFor]), reviews each plan with [critic.ReviewSource] and
// applies the configuration to its report — checks turned off, exclude
// rules, a cap on the issues shown, the severity that fails ([Linter]).
//
// The configuration file is found as golangci-lint finds .golangci.yml:
// in the plan's directory, else in the nearest directory above it that
// has one. Its lint section reads:
//
//	registry: registry.yaml          # the registry plans are checked against
//	lint:
//	  fail-on: warning               # never, critical (default), warning or info
//	  max-issues: 50                 # issues kept per file, the worst first; 0: all
//	  disable: [parallel_explosion]  # checks not reported; "all": every check that may be
//	  enable: []                     # applied after disable
//	  exclude:                       # silence checks on some plans, or one task of them
//	    - path: plans/legacy/*.json  # a filepath.Match pattern, relative to the file
//	      task: words                # the task's id; none: the whole plan
//	      checks: [all]
//
// The checks of problems that keep a plan from running at all — the
// parse, structure and limits categories of [critic.Rule], unknown_key
// aside — can be neither disabled nor excluded.
//
// The reports are [report.File] values, which package report writes as
// text, JSON, SARIF or GitHub annotations. The package reads files and
// runs no program: a [critic.Reviewer] given in [Options] is the only
// thing it calls out to.
package lint
