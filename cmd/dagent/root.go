package main

import (
	"io"

	"github.com/spf13/cobra"
)

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "dagent",
		Short: "Parse, check, render and run plans that LLMs write",
		Long: `dagent is an execution engine for plans that LLMs write: agents plus tasks
plus dependencies as JSON. It parses them leniently, validates them into a
DAG and runs them in parallel phases.

A PLAN argument is a path, or - for standard input. Exit codes: 0 success,
1 the checked thing failed (the plan or registry is invalid, with every
problem on standard error one per line; the run or the predicate failed),
2 usage or I/O error, 3 the run waits for human review, 4 the run needs a
new plan.`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newRun(), newFmt(), newGraph(), newVerify(), newSchema(), newVersion())
	root.AddCommand(newLint())
	return root
}
