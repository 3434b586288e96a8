package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/internal/edit"

	"github.com/dagent-dev/dagent/verify"
	"go.yaml.in/yaml/v3"
)

// ErrInvalidRegistry is matched by every error LoadRegistry and
// ParseRegistry return, so that the CLI can tell a bad registry from a
// failed run.
var ErrInvalidRegistry = errors.New("invalid registry")

// maxRegistryBytes bounds a registry file: it is configuration, and a
// larger file is a mistake.
const maxRegistryBytes = 4 << 20

// maxExpandedBytes bounds what the registry's values add up to once YAML
// aliases are followed, so that a small file cannot expand into a huge one.
const maxExpandedBytes = 4 * maxRegistryBytes

// workerKeys are the settings of a worker in a registry file.
var workerKeys = []string{"command", "description", "dir", "env", "outputs", "preconditions", "timeout"}

// LoadRegistry reads the registry file of the CLI, YAML or JSON:
//
//	workers:
//	  go-vet:
//	    description: Runs go vet on the packages in params.packages
//	    command: ["go", "run", "./worker", "vet"]
//	    dir: .
//	    outputs: [findings, packages]
//	    preconditions: ["(string? data/input)"]
//	    timeout: 2m
//	    env: {GOFLAGS: "-mod=mod"}
//
// Each worker runs as a Command. A relative dir, and a relative program
// path (one holding a slash, such as "./workers/check.sh"), are taken from
// the file's directory, so that the registry works from any working
// directory; a bare program name such as "go" is looked up in PATH when the
// worker runs. Errors name the file, the line, the worker and the key.
func LoadRegistry(path string) (*Registry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &registryError{msg: "read registry", err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRegistryBytes+1))
	if err != nil {
		return nil, &registryError{msg: "read registry", err: err}
	}
	if len(data) > maxRegistryBytes {
		return nil, &registryError{file: path, msg: fmt.Sprintf("the file is larger than the %d MiB a registry may take", maxRegistryBytes>>20)}
	}
	return parseRegistry(data, filepath.Dir(path), path)
}

// ParseRegistry reads a registry in the format of LoadRegistry from data,
// taking relative program paths and directories from baseDir (empty: the
// current directory). Errors give the line but no file name.
func ParseRegistry(data []byte, baseDir string) (*Registry, error) {
	return parseRegistry(data, baseDir, "")
}

func parseRegistry(data []byte, baseDir, file string) (*Registry, error) {
	l := &loader{file: file, budget: maxExpandedBytes, compiled: make(map[string]*verify.Predicate)}
	if len(data) > maxRegistryBytes {
		return nil, l.errorf(nil, "", "the registry is larger than the %d MiB it may take", maxRegistryBytes>>20)
	}
	abs, err := filepath.Abs(baseDir)
	if err != nil {
		return nil, &registryError{file: file, msg: "resolve the registry's directory", err: err}
	}
	l.baseDir = abs

	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, l.errorf(nil, "", `the registry is empty; it needs a "workers" map`)
		}
		return nil, l.syntaxError(err, data)
	}
	var next yaml.Node
	if err := dec.Decode(&next); err != io.EOF {
		if err != nil {
			return nil, l.syntaxError(err, data)
		}
		return nil, l.errorf(&next, "", "a second YAML document starts here; a registry is one document")
	}
	return l.registry(&doc)
}

// loader turns the YAML tree of a registry file into a Registry.
type loader struct {
	file     string
	baseDir  string // absolute
	budget   int    // bytes of values left to read, aliases followed
	compiled map[string]*verify.Predicate
}

// registryError is an error in a registry file, at a line and in a worker
// when they are known.
type registryError struct {
	file   string
	line   int
	worker string
	msg    string
	err    error
}

func (e *registryError) Error() string {
	var b strings.Builder
	switch {
	case e.file != "" && e.line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.file, e.line)
	case e.file != "":
		fmt.Fprintf(&b, "%s: ", e.file)
	case e.line > 0:
		fmt.Fprintf(&b, "line %d: ", e.line)
	}
	if e.worker != "" {
		fmt.Fprintf(&b, "worker %q: ", e.worker)
	}
	b.WriteString(e.msg)
	if e.err != nil {
		if e.msg != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.err.Error())
	}
	return b.String()
}

func (e *registryError) Is(target error) bool { return target == ErrInvalidRegistry }

func (e *registryError) Unwrap() error { return e.err }

// errorf returns an error at n, which may be nil, in worker, which may be
// empty.
func (l *loader) errorf(n *yaml.Node, worker, format string, args ...any) error {
	e := &registryError{file: l.file, worker: worker, msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.line = n.Line
	}
	return e
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parserProblems are the messages of go-yaml's parser, as opposed to its
// scanner. go-yaml counts the lines of parser errors from 0, and leaves out
// line 0.
var parserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected <stream-start>",
	"did not find expected key",
	"did not find expected node content",
	"found duplicate %TAG directive",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// syntaxError moves the line of a YAML syntax error in data to where the
// other errors have it, counted from 1.
func (l *loader) syntaxError(err error, data []byte) error {
	msg := err.Error()
	e := &registryError{file: l.file}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	if slices.Contains(parserProblems, msg) {
		// At the end of the input, go-yaml can report the line after the
		// last.
		lines := bytes.Count(data, []byte("\n"))
		if !bytes.HasSuffix(data, []byte("\n")) {
			lines++
		}
		e.line = min(e.line+1, lines)
	}
	e.msg = "invalid YAML: " + msg
	return e
}

// deref follows aliases, charging what they expand to against the budget.
func (l *loader) deref(n *yaml.Node) (*yaml.Node, error) {
	for range 16 {
		if n.Kind != yaml.AliasNode {
			return n, nil
		}
		if n.Alias == nil {
			return nil, l.errorf(n, "", "alias %q points nowhere", n.Value)
		}
		n = n.Alias
	}
	return nil, l.errorf(n, "", "aliases nest too deeply")
}

// spend charges n bytes against the budget.
func (l *loader) spend(n *yaml.Node, size int) error {
	l.budget -= size + 1
	if l.budget < 0 {
		return l.errorf(n, "", "the registry's values, with aliases followed, exceed %d MiB", maxExpandedBytes>>20)
	}
	return nil
}

// entry is one key and value of a YAML map.
type entry struct {
	key, value *yaml.Node
}

// entries returns the entries of the map m, which is already dereferenced,
// rejecting keys that are not scalars, merge keys and duplicate keys.
// what says what the keys are, for messages: "key", "worker name".
func (l *loader) entries(m *yaml.Node, worker, what string) ([]entry, error) {
	out := make([]entry, 0, len(m.Content)/2)
	seen := make(map[string]int, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, err := l.deref(m.Content[i])
		if err != nil {
			return nil, err
		}
		if k.Kind != yaml.ScalarNode {
			return nil, l.errorf(k, worker, "%s must be a string, not %s", article(what), describe(k))
		}
		if k.ShortTag() == "!!merge" {
			return nil, l.errorf(k, worker, `merge keys ("<<") are not supported; write the settings out`)
		}
		if err := l.spend(k, len(k.Value)); err != nil {
			return nil, err
		}
		if line, dup := seen[k.Value]; dup {
			return nil, l.errorf(k, worker, "%s %q appears twice (first at line %d)", what, k.Value, line)
		}
		seen[k.Value] = k.Line
		v, err := l.deref(m.Content[i+1])
		if err != nil {
			return nil, err
		}
		out = append(out, entry{key: k, value: v})
	}
	return out, nil
}

func (l *loader) registry(doc *yaml.Node) (*Registry, error) {
	top := doc
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil, l.errorf(nil, "", `the registry is empty; it needs a "workers" map`)
		}
		top = doc.Content[0]
	}
	top, err := l.deref(top)
	if err != nil {
		return nil, err
	}
	if isNull(top) {
		return nil, l.errorf(nil, "", `the registry is empty; it needs a "workers" map`)
	}
	if top.Kind != yaml.MappingNode {
		return nil, l.errorf(top, "", `the top level must be a map with a "workers" key, not %s`, describe(top))
	}
	entries, err := l.entries(top, "", "key")
	if err != nil {
		return nil, err
	}
	var workers *yaml.Node
	for _, e := range entries {
		if e.key.Value != "workers" {
			return nil, l.errorf(e.key, "", "unknown key %q%s", e.key.Value, hint(e.key.Value, []string{"workers"}))
		}
		workers = e.value
	}
	if workers == nil || isNull(workers) {
		line := top
		if workers != nil {
			line = workers
		}
		return nil, l.errorf(line, "", `no workers: the registry needs a "workers" map from worker names to their settings`)
	}
	if workers.Kind != yaml.MappingNode {
		return nil, l.errorf(workers, "", `"workers" must be a map from worker names to their settings, not %s`, describe(workers))
	}
	named, err := l.entries(workers, "", "worker name")
	if err != nil {
		return nil, err
	}
	r := NewRegistry()
	for _, e := range named {
		name := e.key.Value
		if name == "" {
			return nil, l.errorf(e.key, "", "a worker name is empty")
		}
		w, err := l.worker(name, e.key, e.value)
		if err != nil {
			return nil, err
		}
		if err := r.Register(name, w); err != nil {
			return nil, &registryError{file: l.file, line: e.key.Line, err: err}
		}
	}
	return r, nil
}

// worker reads the settings of the worker name, whose key is at key.
func (l *loader) worker(name string, key, n *yaml.Node) (Worker, error) {
	if n.Kind != yaml.MappingNode {
		return Worker{}, l.errorf(key, name, "the settings must be a map with at least a command, not %s", describe(n))
	}
	entries, err := l.entries(n, name, "key")
	if err != nil {
		return Worker{}, err
	}
	var (
		w   Worker
		cmd Command
	)
	for _, e := range entries {
		field, v := e.key.Value, e.value
		if !slices.Contains(workerKeys, field) {
			return Worker{}, l.errorf(e.key, name, "unknown key %q%s", field, hint(field, workerKeys))
		}
		if isNull(v) {
			continue
		}
		switch field {
		case "command":
			cmd.Argv, err = l.argv(name, v)
		case "description":
			w.Description, err = l.str(name, field, v)
		case "dir":
			cmd.Dir, err = l.dir(name, v)
		case "env":
			cmd.Env, err = l.env(name, v)
		case "outputs":
			w.Outputs, err = l.outputs(name, v)
		case "preconditions":
			w.Preconditions, w.compiled, err = l.preconditions(name, v)
		case "timeout":
			w.Timeout, err = l.timeout(name, v)
		}
		if err != nil {
			return Worker{}, err
		}
	}
	if cmd.Argv == nil {
		return Worker{}, l.errorf(key, name, `no command: give the program and its arguments, e.g. command: ["./check.sh", "--strict"]`)
	}
	w.Agent = &cmd
	return w, nil
}

// str reads a string value.
func (l *loader) str(worker, field string, n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", l.errorf(n, worker, "%s must be a string, not %s", field, describe(n))
	}
	if err := l.spend(n, len(n.Value)); err != nil {
		return "", err
	}
	return n.Value, nil
}

// stringList reads a list of strings, naming entries from 1 in messages.
func (l *loader) stringList(worker, field string, n *yaml.Node) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, l.errorf(n, worker, "%s must be a list of strings, not %s", field, describe(n))
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		item, err := l.deref(item)
		if err != nil {
			return nil, err
		}
		if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" {
			q := ""
			if item.Kind == yaml.ScalarNode {
				q = "; quote it"
			}
			return nil, l.errorf(item, worker, "%s: entry %d must be a string, not %s%s", field, i+1, describe(item), q)
		}
		if err := l.spend(item, len(item.Value)); err != nil {
			return nil, err
		}
		out = append(out, item.Value)
	}
	return out, nil
}

func (l *loader) argv(worker string, n *yaml.Node) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		return nil, l.errorf(n, worker, `command must be a list of the program and its arguments, e.g. ["go", "vet"], not %s: no shell splits it`, describe(n))
	}
	argv, err := l.stringList(worker, "command", n)
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, l.errorf(n, worker, "command is empty; it needs at least the program")
	}
	if argv[0] == "" {
		return nil, l.errorf(n, worker, "command: the program (entry 1) is empty")
	}
	if strings.ContainsAny(argv[0], "/"+string(filepath.Separator)) && !filepath.IsAbs(argv[0]) {
		argv[0] = filepath.Join(l.baseDir, argv[0])
	}
	return argv, nil
}

func (l *loader) dir(worker string, n *yaml.Node) (string, error) {
	dir, err := l.str(worker, "dir", n)
	if err != nil {
		return "", err
	}
	if dir == "" {
		return "", l.errorf(n, worker, `dir is empty; write "." for the registry's directory, or leave dir out for the current one`)
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(l.baseDir, dir)
	}
	return dir, nil
}

// env reads a map of environment variables into sorted "KEY=value"
// entries. Values may be numbers or booleans, taken as written.
func (l *loader) env(worker string, n *yaml.Node) ([]string, error) {
	if n.Kind != yaml.MappingNode {
		return nil, l.errorf(n, worker, "env must be a map from variable names to values, not %s", describe(n))
	}
	entries, err := l.entries(n, worker, "env variable")
	if err != nil {
		return nil, err
	}
	env := make([]string, 0, len(entries))
	for _, e := range entries {
		k, v := e.key.Value, e.value
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, l.errorf(e.key, worker, `env: %q is not a variable name: it is empty or holds "=" or NUL`, k)
		}
		if v.Kind != yaml.ScalarNode || isNull(v) {
			return nil, l.errorf(v, worker, `env %q must be a string, not %s; write %s: "" for an empty value`, k, describe(v), k)
		}
		if strings.ContainsRune(v.Value, 0) {
			return nil, l.errorf(v, worker, "env %q holds a NUL character", k)
		}
		if err := l.spend(v, len(v.Value)); err != nil {
			return nil, err
		}
		env = append(env, k+"="+v.Value)
	}
	slices.Sort(env)
	return env, nil
}

func (l *loader) outputs(worker string, n *yaml.Node) ([]string, error) {
	outs, err := l.stringList(worker, "outputs", n)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(outs))
	for i, o := range outs {
		if o == "" {
			return nil, l.errorf(n.Content[i], worker, "outputs: entry %d is empty", i+1)
		}
		if seen[o] {
			return nil, l.errorf(n.Content[i], worker, "outputs: %q is declared twice", o)
		}
		seen[o] = true
	}
	return outs, nil
}

// preconditions reads and compiles the preconditions, reusing what other
// workers of the file compiled.
func (l *loader) preconditions(worker string, n *yaml.Node) ([]string, []*verify.Predicate, error) {
	srcs, err := l.stringList(worker, "preconditions", n)
	if err != nil {
		return nil, nil, err
	}
	preds := make([]*verify.Predicate, len(srcs))
	for i, src := range srcs {
		p, ok := l.compiled[src]
		if !ok {
			p, err = verify.Compile(src)
			if err != nil {
				item, _ := l.deref(n.Content[i])
				return nil, nil, &registryError{file: l.file, line: item.Line, worker: worker, msg: fmt.Sprintf("precondition %d", i+1), err: err}
			}
			l.compiled[src] = p
		}
		preds[i] = p
	}
	return srcs, preds, nil
}

func (l *loader) timeout(worker string, n *yaml.Node) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return 0, l.errorf(n, worker, `timeout must be a duration with a unit, e.g. "90s" or "2m", not %s`, describe(n))
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		return 0, l.errorf(n, worker, `timeout %q is not a duration; write a number with a unit, e.g. "90s" or "2m"`, n.Value)
	}
	if d < 0 {
		return 0, l.errorf(n, worker, "timeout %q is negative", n.Value)
	}
	return d, nil
}

// article puts "a" or "an" before noun.
func article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe says what kind of value n is, for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!str":
			return "a string"
		case "!!int", "!!float":
			return "a number (" + n.Value + ")"
		case "!!bool":
			return "a boolean (" + n.Value + ")"
		case "!!null":
			return "null"
		case "!!timestamp":
			return "a timestamp (" + n.Value + ")"
		default:
			return "a value tagged " + tag
		}
	}
	return "an alias"
}

// hint suggests the known key closest to an unknown one, or lists them.
func hint(key string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if len(key) > 2*len(k) {
			continue
		}
		if d := edit.Distance(strings.ToLower(key), k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	if len(known) == 1 {
		return fmt.Sprintf("; the only key here is %q", known[0])
	}
	return "; the keys are " + strings.Join(known, ", ")
}
