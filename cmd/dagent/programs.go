package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/registry"
	"github.com/spf13/cobra"
)

// runnable refuses the registry at path for a run when a worker's program
// cannot be started here: the run would otherwise start and fail only
// when a task reached that worker, after the side effects of the tasks
// before it. Each such worker is printed on stderr, and the command exits
// like one given an invalid registry. Commands that only read plans (lint,
// graph, fmt) keep this a missing_program warning instead.
func runnable(cmd *cobra.Command, path string, reg *registry.Registry) error {
	err := reg.CheckPrograms()
	if err == nil {
		return nil
	}
	w := cmd.ErrOrStderr()
	var joined interface{ Unwrap() []error }
	errs := []error{err}
	if errors.As(err, &joined) {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		fmt.Fprintf(w, "%s: %v\n", path, e)
	}
	fmt.Fprintln(w, "dagent: a run needs the program of every worker of its registry: install it, or fix the worker's command")
	return exitCode(exitInvalid)
}

// runnableCatalog is catalog, its registry refused by runnable.
func runnableCatalog(cmd *cobra.Command, catalog durable.CatalogFunc) durable.CatalogFunc {
	return func(ctx context.Context, path string) (*registry.Registry, string, error) {
		reg, digest, err := catalog(ctx, path)
		if err != nil {
			return nil, "", err
		}
		if err := runnable(cmd, path, reg); err != nil {
			return nil, "", err
		}
		return reg, digest, nil
	}
}
