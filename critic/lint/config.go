package lint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/yamlnode"
)

// ConfigName is the name of the project configuration file.
const ConfigName = ".dagent.yaml"

// maxConfigBytes bounds a configuration file: it is a few settings, and a
// larger file is a mistake.
const maxConfigBytes = 1 << 20

// ErrInvalidConfig is matched by every error about the content of a
// configuration file: a [*ConfigError].
var ErrInvalidConfig = errors.New("invalid configuration")

// ConfigError is a configuration file that cannot be used: where, which
// field and why.
type ConfigError struct {
	// File is the file's path as it was given; empty for a text parsed
	// without one.
	File string
	// Line and Column locate the error, from 1; 0 when unknown (a syntax
	// error has a line and no column).
	Line, Column int
	// Field is the key the error is about, as a path ("lint.exclude.checks");
	// empty for the file as a whole.
	Field string
	// Msg says what is wrong and how to fix it.
	Msg string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	switch {
	case e.Line > 0 && e.Column > 0:
		fmt.Fprintf(&b, "%d:%d:", e.Line, e.Column)
	case e.Line > 0:
		fmt.Fprintf(&b, "%d:", e.Line)
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Config is a project configuration file.
type Config struct {
	// Path is the file the configuration was read from; relative paths in
	// it are relative to its directory. Empty for a configuration that is
	// not a file: its paths are relative to the working directory.
	Path string
	// Registry is the registry file of the project's plans, as written.
	// [RegistryFor] resolves it.
	Registry string
	// Lint is the lint section.
	Lint Settings
}

// Settings tune what lint reports: the lint section of a configuration
// file, or the caller's own in [Options], which override the file's.
type Settings struct {
	// Enable lists checks reported even when Disable turns them off.
	Enable []string
	// Disable lists checks not reported; "all" is every check that may be
	// disabled. Disable applies before Enable, so that Disable ["all"] with
	// Enable ["cycle"] reports one check.
	Disable []string
	// FailOn is the least severity that fails a file; empty: unset
	// ([critic.GateCritical] when nothing sets it).
	FailOn critic.Gate
	// MaxIssues is the most issues a file's report keeps, the worst
	// first; 0 keeps all. Nil: unset.
	MaxIssues *int
	// Exclude silences checks on some plans, or on one task of them.
	Exclude []Exclude
}

// Exclude silences checks on the plans it matches: golangci-lint's
// exclude-rules. It lives in the configuration, not in the plan, because
// a plan is often written by the model whose work lint reviews.
type Exclude struct {
	// Path is a [filepath.Match] pattern of plan files, with slashes,
	// relative to the configuration file's directory; empty matches every
	// plan.
	Path string
	// Task is the id of the task whose issues are silenced; empty
	// silences the plan's issues, its tasks' included.
	Task string
	// Checks are the checks silenced; "all" is every check that may be
	// disabled. A rule has at least one.
	Checks []string
}

// Dir is the directory the configuration's relative paths are relative
// to: the file's, or "." for a configuration that is not a file.
func (c *Config) Dir() string {
	if c.Path == "" {
		return "."
	}
	return filepath.Dir(c.Path)
}

// LoadConfig reads the configuration file at path.
func LoadConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return ParseConfig(data, path)
}

// FindConfig returns the configuration file of dir, or of the nearest
// directory above it that has one; nil when none has. Its Path is
// absolute.
func FindConfig(dir string) (*Config, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for {
		path := filepath.Join(dir, ConfigName)
		if _, err := os.Stat(path); err == nil {
			return LoadConfig(path)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, nil
		}
		dir = parent
	}
}

// ParseConfig reads a configuration from data, the content of the file
// at path (which may be empty). Every error is a [*ConfigError] that names
// the field and, but for an empty path, the file: a key the format does
// not have (with the one it likely meant), a value of the wrong kind, a
// check that does not exist or may not be disabled, a bad pattern. An
// empty text is an empty configuration.
func ParseConfig(data []byte, path string) (*Config, error) {
	r := &reader{file: path}
	if len(data) > maxConfigBytes {
		return nil, r.errorf(nil, "", "the file is larger than the %d KiB a configuration may take", maxConfigBytes>>10)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &Config{Path: path}, nil
		}
		line, msg := yamlnode.Syntax(err, data)
		return nil, &ConfigError{File: path, Line: line, Msg: "invalid YAML: " + msg}
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			line, msg := yamlnode.Syntax(err, data)
			return nil, &ConfigError{File: path, Line: line, Msg: "invalid YAML: " + msg}
		}
		return nil, r.errorf(&next, "", "a second YAML document starts here; a configuration is one document")
	}
	c := &Config{Path: path}
	if err := r.config(c, &doc); err != nil {
		return nil, err
	}
	return c, nil
}

// The keys of each map of the file, in the order messages list them.
var (
	configKeys  = []string{"registry", "lint"}
	lintKeys    = []string{"enable", "disable", "fail-on", "max-issues", "exclude"}
	excludeKeys = []string{"path", "task", "checks"}
)

// reader turns the YAML tree of a configuration file into a Config,
// checking each value where it is.
type reader struct {
	file string
}

// errorf returns an error at n, which may be nil, about field.
func (r *reader) errorf(n *yaml.Node, field, format string, args ...any) error {
	e := &ConfigError{File: r.file, Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// deref follows aliases.
func (r *reader) deref(n *yaml.Node) (*yaml.Node, error) {
	for range 16 {
		if n.Kind != yaml.AliasNode {
			return n, nil
		}
		if n.Alias == nil {
			return nil, r.errorf(n, "", "alias %q points nowhere", n.Value)
		}
		n = n.Alias
	}
	return nil, r.errorf(n, "", "aliases nest too deeply")
}

// isNull reports whether n is an empty value: a key written without one
// is unset.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// fields calls set with each key of the map n and its value, rejecting
// what is not a map, keys not in known, duplicate keys and merge keys.
// field names n in messages ("" for the top level).
func (r *reader) fields(n *yaml.Node, field string, known []string, set func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		what := "must be"
		if field == "" {
			what = "the top level must be"
		}
		return r.errorf(n, field, "%s a map with the keys %s, not %s", what, strings.Join(known, ", "), yamlnode.Describe(n))
	}
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, err := r.deref(n.Content[i])
		if err != nil {
			return err
		}
		if k.Kind != yaml.ScalarNode {
			return r.errorf(k, field, "a key must be a string, not %s", yamlnode.Describe(k))
		}
		if k.ShortTag() == "!!merge" {
			return r.errorf(k, field, `merge keys ("<<") are not supported; write the settings out`)
		}
		path := join(field, k.Value)
		if !slices.Contains(known, k.Value) {
			return r.errorf(k, path, "unknown key%s", yamlnode.KeyHint(k.Value, known))
		}
		if line, dup := seen[k.Value]; dup {
			return r.errorf(k, path, "the key appears twice (first at line %d)", line)
		}
		seen[k.Value] = k.Line
		v, err := r.deref(n.Content[i+1])
		if err != nil {
			return err
		}
		if err := set(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) config(c *Config, doc *yaml.Node) error {
	top := doc
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		top = doc.Content[0]
	}
	top, err := r.deref(top)
	if err != nil || isNull(top) {
		return err
	}
	return r.fields(top, "", configKeys, func(key string, _, v *yaml.Node) error {
		if isNull(v) {
			return nil
		}
		switch key {
		case "registry":
			c.Registry, err = r.str(v, key)
			return err
		default:
			return r.lint(&c.Lint, v)
		}
	})
}

func (r *reader) lint(s *Settings, n *yaml.Node) error {
	return r.fields(n, "lint", lintKeys, func(key string, _, v *yaml.Node) error {
		if isNull(v) {
			return nil
		}
		field := "lint." + key
		var err error
		switch key {
		case "enable":
			s.Enable, err = r.checks(v, field)
		case "disable":
			s.Disable, err = r.checks(v, field)
		case "fail-on":
			s.FailOn, err = r.gate(v, field)
		case "max-issues":
			s.MaxIssues, err = r.maxIssues(v, field)
		default:
			s.Exclude, err = r.excludes(v, field)
		}
		return err
	})
}

// str reads a string.
func (r *reader) str(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", r.errorf(n, field, "must be a string, not %s%s", yamlnode.Describe(n), quoteIt(n))
	}
	return n.Value, nil
}

// quoteIt suggests quoting a scalar that YAML read as something else.
func quoteIt(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		return "; quote it"
	}
	return ""
}

// checks reads a list of check names, each one that may be disabled or
// "all".
func (r *reader) checks(n *yaml.Node, field string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, r.errorf(n, field, "must be a list of check names, not %s", yamlnode.Describe(n))
	}
	names := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		item, err := r.deref(item)
		if err != nil {
			return nil, err
		}
		name, err := r.str(item, field)
		if err != nil {
			return nil, err
		}
		if _, err := expandCheck(name); err != nil {
			return nil, r.errorf(item, field, "%v", err)
		}
		names = append(names, name)
	}
	return names, nil
}

func (r *reader) gate(n *yaml.Node, field string) (critic.Gate, error) {
	s, err := r.str(n, field)
	if err != nil || s == "" {
		return "", err
	}
	g, err := critic.ParseGate(s)
	if err != nil {
		return "", r.errorf(n, field, "unknown level %q: use critical, warning, info or never", s)
	}
	return g, nil
}

func (r *reader) maxIssues(n *yaml.Node, field string) (*int, error) {
	const usage = "a whole number of 0 or more (0: every issue)"
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return nil, r.errorf(n, field, "must be %s, not %s", usage, yamlnode.Describe(n))
	}
	v, err := strconv.ParseInt(n.Value, 0, 32)
	if err != nil || v < 0 {
		return nil, r.errorf(n, field, "must be %s, not %s", usage, n.Value)
	}
	m := int(v)
	return &m, nil
}

func (r *reader) excludes(n *yaml.Node, field string) ([]Exclude, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, r.errorf(n, field, "must be a list of rules, each with checks and a path or a task, not %s", yamlnode.Describe(n))
	}
	rules := make([]Exclude, 0, len(n.Content))
	for _, item := range n.Content {
		item, err := r.deref(item)
		if err != nil {
			return nil, err
		}
		var rule Exclude
		err = r.fields(item, field, excludeKeys, func(key string, _, v *yaml.Node) error {
			if isNull(v) {
				return nil
			}
			sub := field + "." + key
			var err error
			switch key {
			case "path":
				if rule.Path, err = r.str(v, sub); err != nil {
					return err
				}
				if _, err := filepath.Match(rule.Path, ""); err != nil {
					return r.errorf(v, sub, "bad pattern %q: %v", rule.Path, err)
				}
			case "task":
				// Task ids may be numbers, as in the plan.
				if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!int" {
					rule.Task = v.Value
					return nil
				}
				rule.Task, err = r.str(v, sub)
			default:
				rule.Checks, err = r.checks(v, sub)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(rule.Checks) == 0 {
			return nil, r.errorf(item, field, "a rule needs checks: the checks it silences, or [all]")
		}
		rules = append(rules, rule)
	}
	return rules, nil
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}
