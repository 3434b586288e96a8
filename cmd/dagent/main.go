// Command dagent parses, checks, renders and runs plans that LLMs write.
//
// Usage:
//
//	dagent lint [-f F] PLAN...      check plans statically; F: text, json, sarif or github
//	dagent run PLAN --registry F    run a plan on the registry's workers
//	dagent fmt PLAN                 print the canonical JSON of a plan
//	dagent graph [--format F] PLAN  print the plan's phases and edges
//	dagent verify PREDICATE         evaluate a verification predicate on sample data
//	dagent schema                   print the JSON Schema of the canonical plan
//	dagent version                  print the version
//
// PLAN is a path, or - for standard input. Exit codes: 0 success, 1 the plan
// or registry is invalid (every problem on standard error, one per line), the
// run failed or the predicate failed, 2 usage or I/O error, 3 the run waits
// for human review, 4 the run needs a new plan.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dagent-dev/dagent/plan"
)

// Exit codes shared by every command.
const (
	exitOK      = 0
	exitInvalid = 1
	exitUsage   = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	var code exitCode
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &code):
		return int(code)
	case errors.Is(err, plan.ErrInvalid):
		// The problems themselves are already on stderr.
		return exitInvalid
	default:
		fmt.Fprintln(stderr, "dagent:", err)
		return exitUsage
	}
}
