package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func newFmt() *cobra.Command {
	var (
		write    bool
		drop     bool
		registry string
	)
	cmd := &cobra.Command{
		Use:   "fmt PLAN",
		Short: "Print the canonical JSON of a plan",
		Long: `Print the canonical JSON of a plan: aliases resolved, every default filled
in, keys in a stable order, empty optional fields left out. An invalid plan
prints nothing on standard output and its problems on standard error.

Keys the plan format does not know are left out too, and each is reported
on standard error. With -w the file is not rewritten while it has such
keys (exit 1), unless --drop-unknown says to drop them.`,
		Example: `  dagent fmt examples/llm-answer.md
  cat plan.json | dagent fmt -
  dagent fmt -w plan.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, _, err := loadWith(cmd, args[0], registry)
			if err != nil {
				return err
			}
			out, err := d.Plan().Canonical()
			if err != nil {
				return err
			}
			if write {
				if args[0] == "-" {
					return fmt.Errorf("fmt: -w needs a file, not standard input")
				}
				if err := refuseDrop(cmd, args[0], d.Plan().Unknown, drop); err != nil {
					return err
				}
				return writeFile(args[0], out)
			}
			reportUnknown(cmd, args[0], d.Plan().Unknown)
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().BoolVarP(&write, "write", "w", false, "write the canonical form back to the file instead of printing it")
	cmd.Flags().BoolVar(&drop, "drop-unknown", false, "with -w, rewrite the file even though keys the plan format does not know are dropped")
	cmd.Flags().StringVar(&registry, "registry", "", "registry file (YAML or JSON) naming the workers tasks may use")
	return cmd
}

// writeFile replaces path's content, keeping its permissions.
func writeFile(path string, data []byte) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, info.Mode().Perm())
}
