package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/dagent-dev/dagent/plan"
	"github.com/spf13/cobra"
)

// load reads, parses and validates the plan at path ("-" for stdin). When
// the plan is invalid it prints every problem to stderr, one per line, and
// returns an error matching plan.ErrInvalid.
func load(cmd *cobra.Command, path string) (*plan.Plan, error) {
	data, err := read(cmd.InOrStdin(), path)
	if err != nil {
		return nil, err
	}
	p, err := plan.Parse(data)
	problems := plan.Problems(err)
	if err != nil && problems == nil {
		return nil, err
	}
	// A plan that parsed with problems is still checked, so that one run
	// shows everything to fix.
	if p != nil {
		problems = append(problems, plan.Problems(p.Validate())...)
	}
	if len(problems) == 0 {
		return p, nil
	}
	// Parse and Validate each report in source order; merged, the problems
	// stay in source order, plan-level ones first.
	slices.SortStableFunc(problems, func(a, b *plan.Problem) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Column, b.Pos.Column))
	})
	for _, prob := range problems {
		fmt.Fprintln(cmd.ErrOrStderr(), prob.Error())
	}
	return nil, &plan.Error{Problems: problems}
}

func read(stdin io.Reader, path string) ([]byte, error) {
	if path == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("read standard input: %w", err)
		}
		return data, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read plan: %s does not exist", path)
	}
	return data, err
}
