package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/registry"
)

// The host side of the suite: a trusted registry with Go function tools,
// Go workers and a command worker, over the files in testdata/files.

// filesDir is the root the read_file worker reads from.
const filesDir = "testdata/files"

// Facts about testdata/files the strict assertions check answers against.
const (
	poemWords  = 34 // poem.txt
	alphaWords = 6  // notes/alpha.txt
	betaWords  = 33 // notes/beta.txt
)

// workerEnv makes the test binary run as the calc command worker.
const workerEnv = "DAGENT_E2E_WORKER"

// call is one call of a worker.
type call struct {
	Worker, RunID, TaskID string
	Attempt               int
	Err                   error
}

// calls records the calls of a registry's workers. It is safe for
// concurrent use: tasks of a phase call workers in parallel.
type calls struct {
	mu  sync.Mutex
	all []call
}

func (c *calls) add(x call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all = append(c.all, x)
}

// list returns the calls so far, in order.
func (c *calls) list() []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.all)
}

// ofTask returns the calls made for task id.
func (c *calls) ofTask(id string) []call {
	var out []call
	for _, x := range c.list() {
		if x.TaskID == id {
			out = append(out, x)
		}
	}
	return out
}

// ofWorker returns the calls of the worker name.
func (c *calls) ofWorker(name string) []call {
	var out []call
	for _, x := range c.list() {
		if x.Worker == name {
			out = append(out, x)
		}
	}
	return out
}

// counted wraps a worker's agent so that every call is recorded.
func counted(name string, a agent.Agent, c *calls) agent.Agent {
	return agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		res, err := a.Run(ctx, req)
		c.add(call{Worker: name, RunID: req.RunID, TaskID: req.TaskID, Attempt: req.Attempt, Err: err})
		return res, err
	})
}

// registryOptions choose what newRegistry registers.
type registryOptions struct {
	// flakyCount makes count_words fail its first call: the injected
	// failure.
	flakyCount bool
	// only, when set, registers only these workers and no tools: a smaller
	// registry keeps prompts small.
	only []string
}

// errInjected is the failure the flaky count_words worker injects.
var errInjected = errors.New("count_words: service unavailable (injected failure)")

// newRegistry returns the suite's registry and the record of its workers'
// calls.
func newRegistry(opts registryOptions) (*registry.Registry, *calls, error) {
	reg := registry.New()
	c := &calls{}
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	var once sync.Once
	count := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		fail := false
		if opts.flakyCount {
			once.Do(func() { fail = true })
		}
		if fail {
			return agent.Result{}, errInjected
		}
		return agent.Result{Output: map[string]any{"words": len(strings.Fields(textOf(req)))}}, nil
	})
	workers := map[string]registry.Worker{
		"read_file": {
			Description: "Reads the file named in the input, e.g. notes/alpha.txt.",
			Outputs:     []string{"path", "text"},
			Agent:       agent.Func(readFile),
		},
		"count_words": {
			Description: "Counts the words of inputs.text, or of an upstream text.",
			Outputs:     []string{"words"},
			Agent:       count,
		},
		"calc": {
			Description: "Evaluates the arithmetic in the input, e.g. (2 + 3) * 4.",
			Outputs:     []string{"expression", "value"},
			Agent:       &agent.Command{Argv: []string{exe}, Env: []string{workerEnv + "=calc"}},
		},
	}
	for name, w := range workers {
		if opts.only != nil && !slices.Contains(opts.only, name) {
			continue
		}
		w.Agent = counted(name, w.Agent, c)
		if err := reg.Register(name, w); err != nil {
			return nil, nil, err
		}
	}
	if opts.only != nil {
		return reg, c, nil
	}
	tools := map[string]registry.Tool{
		"calculate": {
			Description: "Evaluates arithmetic: + - * / and parentheses.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`),
			Run: func(_ context.Context, args json.RawMessage) (string, error) {
				var a struct{ Expression string }
				if err := json.Unmarshal(args, &a); err != nil {
					return "", err
				}
				v, err := calculate(a.Expression)
				if err != nil {
					return "", err
				}
				return strconv.FormatFloat(v, 'f', -1, 64), nil
			},
		},
		"word_count": {
			Description: "Counts the words of a text.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
			Run: func(_ context.Context, args json.RawMessage) (string, error) {
				var a struct{ Text string }
				if err := json.Unmarshal(args, &a); err != nil {
					return "", err
				}
				return strconv.Itoa(len(strings.Fields(a.Text))), nil
			},
		},
	}
	for name, t := range tools {
		if err := reg.RegisterTool(name, t); err != nil {
			return nil, nil, err
		}
	}
	return reg, c, nil
}

// filePath finds a file name such as notes/alpha.txt in text.
var filePath = regexp.MustCompile(`[A-Za-z0-9_./-]+\.txt`)

// readFile is the read_file worker: it reads a file of testdata/files,
// never one outside it.
func readFile(_ context.Context, req agent.Request) (agent.Result, error) {
	name, _ := req.Params["path"].(string)
	if name == "" {
		name = filePath.FindString(req.Input)
	}
	if name == "" {
		return agent.Result{}, fmt.Errorf("read_file: no file named in the input %q; the files are %s", req.Input, strings.Join(fileNames(), ", "))
	}
	root, err := os.OpenRoot(filesDir)
	if err != nil {
		return agent.Result{}, err
	}
	defer root.Close()
	f, err := root.Open(strings.TrimPrefix(filepath.ToSlash(name), "/"))
	if err != nil {
		return agent.Result{}, fmt.Errorf("read_file: no file %q; the files are %s", name, strings.Join(fileNames(), ", "))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return agent.Result{}, fmt.Errorf("read_file: %s: %w", name, err)
	}
	return agent.Result{Output: map[string]any{"path": name, "text": string(b)}}, nil
}

// fileNames lists the files read_file can read.
func fileNames() []string {
	var names []string
	_ = filepath.WalkDir(filesDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(filesDir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	return names
}

// textOf is the text count_words counts: inputs.text, else the text of an
// upstream result, else the input.
func textOf(req agent.Request) string {
	if s, ok := req.Inputs["text"].(string); ok {
		return s
	}
	for _, id := range sortedKeys(req.Depends) {
		if m, ok := req.Depends[id].(map[string]any); ok {
			if s, ok := m["text"].(string); ok {
				return s
			}
		}
	}
	return req.Input
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// calcWorker is the calc command worker: the test binary run with
// DAGENT_E2E_WORKER=calc reads an agent.Request on standard input and
// writes {expression, value} on standard output.
func calcWorker() int {
	var req agent.Request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "calc: the request is not JSON:", err)
		return 2
	}
	src, _ := req.Params["expression"].(string)
	if src == "" {
		src, _ = req.Inputs["expression"].(string)
	}
	if src == "" {
		src = arithmetic(req.Input)
	}
	v, err := calculate(src)
	if err != nil {
		fmt.Fprintf(os.Stderr, "calc: %v\n", err)
		return 1
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"expression": src, "value": v})
	return 0
}

// arithmeticRun matches a stretch of arithmetic in prose.
var arithmeticRun = regexp.MustCompile(`[-+*/().0-9 ]+`)

// arithmetic returns the longest stretch of arithmetic in s that holds a
// digit.
func arithmetic(s string) string {
	best := ""
	for _, m := range arithmeticRun.FindAllString(s, -1) {
		m = strings.TrimSpace(m)
		if len(m) > len(best) && strings.ContainsAny(m, "0123456789") {
			best = m
		}
	}
	return best
}

// calculate evaluates + - * / and parentheses over numbers.
func calculate(src string) (float64, error) {
	p := &calcParser{s: src}
	v, err := p.sum()
	if err != nil {
		return 0, err
	}
	p.space()
	if p.i < len(p.s) {
		return 0, fmt.Errorf("unexpected %q at %d in %q", p.s[p.i], p.i, src)
	}
	return v, nil
}

type calcParser struct {
	s string
	i int
}

func (p *calcParser) space() {
	for p.i < len(p.s) && unicode.IsSpace(rune(p.s[p.i])) {
		p.i++
	}
}

func (p *calcParser) sum() (float64, error) {
	v, err := p.product()
	for err == nil {
		p.space()
		if p.i >= len(p.s) || (p.s[p.i] != '+' && p.s[p.i] != '-') {
			return v, nil
		}
		op := p.s[p.i]
		p.i++
		var w float64
		if w, err = p.product(); op == '+' {
			v += w
		} else {
			v -= w
		}
	}
	return 0, err
}

func (p *calcParser) product() (float64, error) {
	v, err := p.factor()
	for err == nil {
		p.space()
		if p.i >= len(p.s) || (p.s[p.i] != '*' && p.s[p.i] != '/') {
			return v, nil
		}
		op := p.s[p.i]
		p.i++
		var w float64
		if w, err = p.factor(); err != nil {
			break
		}
		if op == '*' {
			v *= w
		} else if w == 0 {
			return 0, errors.New("division by zero")
		} else {
			v /= w
		}
	}
	return 0, err
}

func (p *calcParser) factor() (float64, error) {
	p.space()
	if p.i >= len(p.s) {
		return 0, fmt.Errorf("the expression %q ends too soon", p.s)
	}
	switch c := p.s[p.i]; {
	case c == '(':
		p.i++
		v, err := p.sum()
		if err != nil {
			return 0, err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return 0, fmt.Errorf("missing ) in %q", p.s)
		}
		p.i++
		return v, nil
	case c == '-':
		p.i++
		v, err := p.factor()
		return -v, err
	case c == '.' || (c >= '0' && c <= '9'):
		start := p.i
		for p.i < len(p.s) && (p.s[p.i] == '.' || (p.s[p.i] >= '0' && p.s[p.i] <= '9')) {
			p.i++
		}
		return strconv.ParseFloat(p.s[start:p.i], 64)
	default:
		return 0, fmt.Errorf("unexpected %q at %d in %q", c, p.i, p.s)
	}
}
