package main

import (
	"github.com/dagent-dev/dagent/plan"
	"github.com/spf13/cobra"
)

func newGraph() *cobra.Command {
	var format, registry string
	cmd := &cobra.Command{
		Use:   "graph PLAN",
		Short: "Print a plan's phases and dependencies",
		Long: `Print a plan's DAG. --format json prints {"phases": [[...]], "edges":
[[dependency, dependent], ...]}; mermaid a Mermaid flowchart; dot a Graphviz
digraph; md a Markdown table of the tasks. Phases are the groups of tasks
that run in parallel: level 0 has no dependencies, every other task sits one
level above its highest dependency.`,
		Example: `  dagent graph examples/research.json
  dagent graph --format mermaid examples/research.json
  dagent graph --format dot examples/research.json | dot -Tsvg > plan.svg`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := plan.ParseFormat(format)
			if err != nil {
				return err
			}
			d, _, err := loadWith(cmd, args[0], registry)
			if err != nil {
				return err
			}
			reportUnknown(cmd, args[0], d.Plan().Unknown)
			return d.Render(cmd.OutOrStdout(), f)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", string(plan.JSON), "output format: json, mermaid, dot or md")
	cmd.Flags().StringVar(&registry, "registry", "", "registry file (YAML or JSON) naming the workers tasks may use")
	return cmd
}
