package main

import (
	"cmp"
	"fmt"
	"os"

	"github.com/dagent-dev/dagent/critic/lint"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/spf13/cobra"
)

// registryEnv names a registry file for every command that takes
// --registry, when the flag is not given.
const registryEnv = "DAGENT_REGISTRY"

// noRegistry is what the CLI says when no registry was found: it names
// every place one is looked for, in order.
const noRegistry = "no --registry given (nor " + registryEnv + ", registry: in " + lint.ConfigName + ", or " + lint.RegistryName + " beside the plan)"

// registrySource is where a command's registry file comes from.
type registrySource struct {
	path string // empty: no registry
}

// resolveRegistry finds the registry file for the plan at planPath ("" or
// "-": none on disk), first found first: the --registry flag, the
// DAGENT_REGISTRY variable, then what [lint.RegistryFor] finds — the
// registry: of the project configuration file found upward from the plan,
// then a registry.yaml beside the plan. No source at all is no registry.
func resolveRegistry(flag, planPath string) (registrySource, error) {
	if path := cmp.Or(flag, os.Getenv(registryEnv)); path != "" {
		return registrySource{path: path}, nil
	}
	path, err := lint.RegistryFor(planPath)
	return registrySource{path: path}, err
}

// loadResolved resolves and loads the registry of the plan at planPath.
func loadResolved(cmd *cobra.Command, flag, planPath string) (*registry.Registry, string, registrySource, error) {
	src, err := resolveRegistry(flag, planPath)
	if err != nil {
		return nil, "", src, err
	}
	reg, digest, err := loadCatalog(cmd, src.path)
	return reg, digest, src, err
}

// undefinedAgents lists the agents p's tasks name that the plan does not
// define: without a registry, nothing says whether the host runs them.
func undefinedAgents(p *plan.Plan) []string { return lint.HostWorkers(p) }

// unchecked says on stderr that agents were not checked against a
// registry, naming them; where prefixes the line (a file name, or "").
func unchecked(cmd *cobra.Command, where string, agents []string) {
	if len(agents) == 0 {
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%snote: %s: %s\n", where, noRegistry, quotedAgents(agents))
}

// quotedAgents says that the agents are not checked.
func quotedAgents(names []string) string {
	s := "agent"
	if len(names) > 1 {
		s += "s"
	}
	for i, n := range names {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %q", n)
	}
	if len(names) > 1 {
		return s + " are taken as host workers, unchecked"
	}
	return s + " is taken as a host worker, unchecked"
}

// hintNoRegistry adds, after the problems of a plan checked without a
// registry, why its agents are unknown.
func hintNoRegistry(cmd *cobra.Command, src registrySource, err error) {
	if src.path != "" {
		return
	}
	for _, prob := range plan.Problems(err) {
		if prob.Code == plan.CodeUnknownAgent {
			fmt.Fprintf(cmd.ErrOrStderr(), "dagent: %s: tasks may name only the plan's agents and %q\n", noRegistry, plan.DefaultAgent)
			return
		}
	}
}
