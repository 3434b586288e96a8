package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// configName is the project configuration file: the first one found in the
// plan's directory or above it, as golangci-lint finds .golangci.yml.
const configName = ".dagent.yaml"

// registryEnv names a registry file for every command that takes
// --registry, when the flag is not given.
const registryEnv = "DAGENT_REGISTRY"

// besideName is the registry file found beside a plan when nothing else
// names one.
const besideName = "registry.yaml"

// noRegistry is what the CLI says when no registry was found: it names
// every place one is looked for, in order.
const noRegistry = "no --registry given (nor " + registryEnv + ", registry: in " + configName + ", or " + besideName + " beside the plan)"

// projectConfig is a .dagent.yaml file.
type projectConfig struct {
	// Registry is the registry file, relative to the configuration file.
	Registry string     `yaml:"registry"`
	Lint     lintConfig `yaml:"lint"`

	path string // the file, absolute
}

// lintConfig is the lint: section of a .dagent.yaml file.
type lintConfig struct {
	Enable    []string      `yaml:"enable"`
	Disable   []string      `yaml:"disable"`
	FailOn    string        `yaml:"fail-on"`
	MaxIssues *int          `yaml:"max-issues"`
	Exclude   []excludeRule `yaml:"exclude"`
}

// excludeRule silences checks on some plans, or on some tasks of them:
// golangci-lint's exclude-rules, kept out of the plan itself because a
// plan is often written by the model whose work lint reviews.
type excludeRule struct {
	// Path is a filepath.Match pattern of plan files, relative to the
	// configuration file's directory; empty matches every plan.
	Path string `yaml:"path"`
	// Task is the id of the task whose issues are silenced; empty
	// silences the plan's issues, its tasks' included.
	Task string `yaml:"task"`
	// Checks are the checks silenced; "all" is every check that may be
	// disabled.
	Checks []string `yaml:"checks"`
}

// goType is how yaml.v3 says a key is not a field of a Go type.
var goType = regexp.MustCompile(`not found in type \S+`)

// findConfig returns the .dagent.yaml file of dir or of the nearest
// directory above it that has one, or nil.
func findConfig(dir string) (*projectConfig, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for {
		path := filepath.Join(dir, configName)
		if _, err := os.Stat(path); err == nil {
			return readConfig(path)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, nil
		}
		dir = parent
	}
}

// readConfig reads a .dagent.yaml file; a key it does not know is an
// error, so that a misspelt setting is not silently ignored.
func readConfig(path string) (*projectConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &projectConfig{path: path}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		// yaml names the Go type a key is not a field of; the user knows
		// the file.
		msg := goType.ReplaceAllString(err.Error(), "is not a key of "+configName)
		return nil, fmt.Errorf("config %s: %s", path, msg)
	}
	return c, nil
}

// dir is the directory relative paths of the configuration are read from.
func (c *projectConfig) dir() string { return filepath.Dir(c.path) }

// planDir is the directory a plan's configuration and registry are
// looked for in: the plan's own, or the working directory for standard
// input and for no plan at all.
func planDir(path string) string {
	if path == "" || path == "-" {
		return "."
	}
	return filepath.Dir(path)
}

// registrySource is where a command's registry file comes from.
type registrySource struct {
	path string // empty: no registry
	from string // says where path came from, for the messages that name it
}

// resolveRegistry finds the registry file for the plan at planPath ("" or
// "-": none on disk), first found first: the --registry flag, the
// DAGENT_REGISTRY variable, the registry: of the project configuration
// file found upward from the plan, then a registry.yaml beside the plan.
// No source at all is no registry.
func resolveRegistry(flag, planPath string) (registrySource, error) {
	if flag != "" {
		return registrySource{path: flag, from: "--registry"}, nil
	}
	if env := os.Getenv(registryEnv); env != "" {
		return registrySource{path: env, from: registryEnv}, nil
	}
	cfg, err := findConfig(planDir(planPath))
	if err != nil {
		return registrySource{}, err
	}
	if cfg != nil && cfg.Registry != "" {
		path := cfg.Registry
		if !filepath.IsAbs(path) {
			path = filepath.Join(cfg.dir(), path)
		}
		return registrySource{path: path, from: cfg.path}, nil
	}
	if planPath != "" && planPath != "-" {
		beside := filepath.Join(planDir(planPath), besideName)
		if info, err := os.Stat(beside); err == nil && !info.IsDir() {
			return registrySource{path: beside, from: "beside the plan"}, nil
		}
	}
	return registrySource{}, nil
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

// undefinedAgents lists, once each in plan order, the agents p's tasks
// name that the plan does not define: without a registry, nothing says
// whether the host runs them.
func undefinedAgents(p *plan.Plan) []string {
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
