package lint

import (
	"os"
	"path/filepath"

	"github.com/dagent-dev/dagent/critic/report"
	"github.com/dagent-dev/dagent/plan"
)

// RegistryName is the registry file looked for beside a plan when nothing
// else names one.
const RegistryName = "registry.yaml"

// RegistryFor returns the registry file of the plan at planPath: the
// registry of the configuration file found from the plan's directory
// ([FindConfig]), else the registry.yaml beside the plan; "" when there is
// neither. A planPath of "" or [report.Stdin] (no plan on disk) looks for
// the configuration from the working directory and has nothing beside it.
// A host that lets its user name a registry (a flag, an environment
// variable) tries that first.
func RegistryFor(planPath string) (string, error) {
	cfg, err := FindConfig(planDir(planPath))
	if err != nil {
		return "", err
	}
	return registryOf(cfg, planPath), nil
}

// registryOf is the registry of the plan at planPath under cfg, which may
// be nil.
func registryOf(cfg *Config, planPath string) string {
	if cfg != nil && cfg.Registry != "" {
		if filepath.IsAbs(cfg.Registry) {
			return cfg.Registry
		}
		return filepath.Join(cfg.Dir(), cfg.Registry)
	}
	if planPath == "" || planPath == report.Stdin {
		return ""
	}
	beside := filepath.Join(filepath.Dir(planPath), RegistryName)
	if info, err := os.Stat(beside); err == nil && !info.IsDir() {
		return beside
	}
	return ""
}

// planDir is the directory a plan's configuration and registry are
// looked for in: the plan's own, or the working directory for standard
// input and for no plan at all.
func planDir(path string) string {
	if path == "" || path == report.Stdin {
		return "."
	}
	return filepath.Dir(path)
}

// HostWorkers lists, once each in plan order, the agents p's tasks name
// that p does not define (nor [plan.DefaultAgent]): the host's workers,
// when no registry says which workers the host has. Lint checks a plan
// without a registry with these taken as workers, unchecked.
func HostWorkers(p *plan.Plan) []string {
	var names []string
	seen := make(map[string]bool)
	for i := range p.Tasks {
		name := p.Tasks[i].Agent
		if _, defined := p.Agents[name]; defined || name == "" || name == plan.DefaultAgent || seen[name] {
			continue
		}
		seen[name] = true
		names = append(names, name)
	}
	return names
}
