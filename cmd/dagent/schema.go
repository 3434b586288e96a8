package main

import (
	"github.com/dagent-dev/dagent/plan"
	"github.com/spf13/cobra"
)

func newSchema() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the canonical plan",
		Long: `Print the JSON Schema (draft 2020-12) of the canonical plan: what dagent fmt
writes, and the structured-output format to hand an LLM that writes plans.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(plan.Schema())
			return err
		},
	}
}
