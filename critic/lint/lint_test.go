package lint

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/critic/report"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/registry/regfile"
)

func worker(name string) string {
	return "workers:\n  " + name + ":\n    command: [\"true\"]\n"
}

// fourWorkers names one worker from each place a registry may come from.
const fourWorkers = `{"tasks": [
  {"id": "a", "agent": "optw", "input": "a"},
  {"id": "b", "agent": "confw", "input": "b"},
  {"id": "c", "agent": "besidew", "input": "c"},
  {"id": "d", "agent": "catw", "input": "d"}
]}`

// unknownWorkers lists the tasks of r whose workers its registry lacks.
func unknownWorkers(r Result) []string {
	var out []string
	for _, is := range r.Report.Issues {
		if is.Check == "unknown_worker" {
			out = append(out, is.TaskID)
		}
	}
	return out
}

func TestRegistryResolution(t *testing.T) {
	catalog := registry.New()
	require.NoError(t, catalog.Register("catw", registry.Worker{Agent: agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{}, nil })}))
	tests := []struct {
		name      string
		opt       bool // Options.Registry
		config    bool // registry: in the configuration file
		beside    bool // registry.yaml beside the plan
		catalog   bool // Options.Catalog
		known     string
		registry  string // the file checked against, relative to the project
		unchecked []string
	}{
		{"the catalog over everything", true, true, true, true, "d", "", nil},
		{"the option over the file's", true, true, true, false, "a", "opt.yaml", nil},
		{"the configuration file over the one beside the plan", false, true, true, false, "b", "conf/reg.yaml", nil},
		{"beside the plan", false, false, true, false, "c", "plans/registry.yaml", nil},
		{"none: host workers, unchecked", false, false, false, false, "", "", []string{"optw", "confw", "besidew", "catw"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{
				"plans/plan.json": fourWorkers,
				"opt.yaml":        worker("optw"),
				"conf/reg.yaml":   worker("confw"),
			}
			if tt.config {
				files[ConfigName] = "registry: conf/reg.yaml\n"
			}
			if tt.beside {
				files["plans/registry.yaml"] = worker("besidew")
			}
			dir := tree(t, files)
			var opts Options
			if tt.opt {
				opts.Registry = filepath.Join(dir, "opt.yaml")
			}
			if tt.catalog {
				opts.Catalog = catalog
			}
			l, err := New(opts)
			require.NoError(t, err)
			r, err := l.File(context.Background(), filepath.Join("plans", "plan.json"))
			require.NoError(t, err)
			assert.Equal(t, tt.unchecked, r.Unchecked)
			if tt.known == "" {
				assert.Empty(t, unknownWorkers(r))
				assert.Empty(t, r.Registry)
				return
			}
			var want []string
			for _, task := range []string{"a", "b", "c", "d"} {
				if task != tt.known {
					want = append(want, task)
				}
			}
			assert.Equal(t, want, unknownWorkers(r))
			if tt.registry == "" {
				assert.Empty(t, r.Registry)
			} else {
				rel, err := filepath.Rel(dir, r.Registry)
				if !filepath.IsAbs(r.Registry) {
					rel, err = r.Registry, nil
				}
				require.NoError(t, err)
				assert.Equal(t, filepath.FromSlash(tt.registry), rel)
			}

			// RegistryFor finds what the Linter finds without options.
			if !tt.opt && !tt.catalog {
				found, err := RegistryFor(filepath.Join("plans", "plan.json"))
				require.NoError(t, err)
				assert.Equal(t, r.Registry, found)
			}
		})
	}
}

func TestRegistryForStdin(t *testing.T) {
	dir := tree(t, map[string]string{RegistryName: worker("w")})
	for _, path := range []string{"", report.Stdin} {
		found, err := RegistryFor(path)
		require.NoError(t, err)
		assert.Empty(t, found, "nothing is beside standard input")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, ConfigName), []byte("registry: /abs/reg.yaml\n"), 0o600))
	found, err := RegistryFor(report.Stdin)
	require.NoError(t, err)
	assert.Equal(t, "/abs/reg.yaml", found, "the configuration of the working directory; an absolute path as it is")
}

func TestRegistryErrors(t *testing.T) {
	dir := tree(t, map[string]string{"plan.json": fourWorkers, "bad.yaml": "workers:\n  w:\n    command: []\n"})

	l, err := New(Options{Registry: filepath.Join(dir, "bad.yaml")})
	require.NoError(t, err)
	_, err = l.File(context.Background(), "plan.json")
	assert.ErrorIs(t, err, regfile.ErrInvalidRegistry)

	l, err = New(Options{Registry: "nope.yaml"})
	require.NoError(t, err)
	_, err = l.File(context.Background(), "plan.json")
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.EqualError(t, err, "read registry: open nope.yaml: no such file or directory")

	// LoadRegistry reads the file instead.
	var asked []string
	l, err = New(Options{Registry: "any.yaml", LoadRegistry: func(path string) (*registry.Registry, error) {
		asked = append(asked, path)
		return registry.New(), nil
	}})
	require.NoError(t, err)
	r, err := l.File(context.Background(), "plan.json")
	require.NoError(t, err)
	assert.Equal(t, []string{"any.yaml"}, asked)
	assert.Equal(t, []string{"a", "b", "c", "d"}, unknownWorkers(r))
}

func TestOptionErrors(t *testing.T) {
	tests := []struct {
		name    string
		s       Settings
		setting string
		is      error
		err     string
	}{
		{"unknown check", Settings{Disable: []string{"orphan"}}, "disable", ErrUnknownCheck, `disable: unknown check "orphan"; the checks are listed in docs/lint.md`},
		{"fixed check", Settings{Enable: []string{"cycle"}}, "enable", ErrFixedCheck, `enable: check "cycle" cannot be disabled: a plan with it does not run`},
		{"bad gate", Settings{FailOn: "error"}, "fail-on", nil, `fail-on: unknown gate "error"; use critical, warning, info or never`},
		{"negative cap", Settings{MaxIssues: intp(-2)}, "max-issues", nil, "max-issues: must not be negative"},
		{"exclude without checks", Settings{Exclude: []Exclude{{Task: "a"}}}, "exclude", nil, "exclude: a rule needs checks"},
		{"exclude of a fixed check", Settings{Exclude: []Exclude{{Checks: []string{"invalid_json"}}}}, "exclude", ErrFixedCheck, `exclude: check "invalid_json" cannot be disabled: a plan with it does not run`},
		{"exclude with a bad pattern", Settings{Exclude: []Exclude{{Path: "[", Checks: []string{"all"}}}}, "exclude", nil, `exclude: bad pattern "[": syntax error in pattern`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New(Options{Settings: tt.s})
			assert.Nil(t, l)
			var oe *OptionError
			require.True(t, errors.As(err, &oe), "%v", err)
			assert.Equal(t, tt.setting, oe.Setting)
			assert.EqualError(t, err, tt.err)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
				var ce *CheckError
				require.True(t, errors.As(err, &ce))
			}
		})
	}
}

// reviewer adds one finding per plan, or fails.
type reviewer struct {
	calls int
	err   error
}

func (r *reviewer) Review(_ context.Context, p *plan.Plan, static critic.Report) ([]critic.Issue, error) {
	r.calls++
	if r.err != nil {
		return nil, r.err
	}
	return []critic.Issue{{Check: "llm_review", Severity: critic.Warning, TaskID: p.Tasks[0].ID, Message: "seen"}}, nil
}

func TestReviewer(t *testing.T) {
	tree(t, map[string]string{
		"plan.json":  `{"tasks": [{"id": "a", "input": "x"}]}`,
		"empty.json": `{"tasks": []}`,
		"prose.txt":  "not a plan",
	})
	rv := &reviewer{}
	l, err := New(Options{Reviewer: rv, Config: &Config{}, Settings: Settings{FailOn: critic.GateWarning}})
	require.NoError(t, err)
	r, err := l.File(context.Background(), "plan.json")
	require.NoError(t, err)
	assert.Equal(t, []string{"a:llm_review"}, issues(r))
	assert.True(t, r.Fails, "the reviewer's findings count for the gate")

	for _, path := range []string{"empty.json", "prose.txt"} {
		_, err := l.File(context.Background(), path)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, rv.calls, "a text without tasks is not sent")

	// The reviewer's findings are silenced as the critic's are.
	l, err = New(Options{Reviewer: rv, Config: &Config{Lint: Settings{Exclude: []Exclude{{Checks: []string{"all"}}}}}})
	require.NoError(t, err)
	r, err = l.File(context.Background(), "plan.json")
	require.NoError(t, err)
	assert.Empty(t, issues(r))

	failing := &reviewer{err: errors.New("budget exceeded")}
	l, err = New(Options{Reviewer: failing, Config: &Config{}})
	require.NoError(t, err)
	_, err = l.File(context.Background(), "plan.json")
	assert.EqualError(t, err, "plan.json: budget exceeded")
	assert.ErrorIs(t, err, critic.ErrReviewer)
	assert.ErrorIs(t, err, failing.err)
	var re *ReviewError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, "plan.json", re.Path)
}

// failingReader fails after its text.
type failingReader struct{ r io.Reader }

func (f failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("broken pipe")
	}
	return n, err
}

func TestRead(t *testing.T) {
	const small = `{"tasks": ["a"]}`
	tree(t, map[string]string{"small.json": small, "big.json": small + strings.Repeat(" ", 64)})
	l, err := New(Options{Config: &Config{}, Limits: plan.Limits{MaxPlanBytes: 32}, Stdin: strings.NewReader(small)})
	require.NoError(t, err)

	r, err := l.File(context.Background(), report.Stdin)
	require.NoError(t, err)
	assert.Equal(t, report.Stdin, r.Path)
	assert.Equal(t, 10, r.Report.Score, "standard input is Options.Stdin")

	_, err = l.File(context.Background(), "big.json")
	assert.EqualError(t, err, "read plan: big.json is 80 bytes, over the limit of 32")
	assert.ErrorIs(t, err, ErrTooLarge)

	l, err = New(Options{Config: &Config{}, Limits: plan.Limits{MaxPlanBytes: 32}, Stdin: strings.NewReader(strings.Repeat(" ", 40))})
	require.NoError(t, err)
	_, err = l.File(context.Background(), report.Stdin)
	assert.EqualError(t, err, "read plan: standard input holds more than 32 bytes, the limit")
	assert.ErrorIs(t, err, ErrTooLarge)

	l, err = New(Options{Config: &Config{}, Stdin: failingReader{strings.NewReader(small)}})
	require.NoError(t, err)
	_, err = l.File(context.Background(), report.Stdin)
	assert.EqualError(t, err, "read standard input: broken pipe")

	_, err = l.File(context.Background(), "nope.json")
	assert.EqualError(t, err, "read plan: nope.json does not exist")
	assert.ErrorIs(t, err, os.ErrNotExist)

	// A negative limit is none.
	l, err = New(Options{Config: &Config{}, Limits: plan.Limits{MaxPlanBytes: -1}})
	require.NoError(t, err)
	_, err = l.File(context.Background(), "big.json")
	require.NoError(t, err)
}

func TestSource(t *testing.T) {
	dir := tree(t, map[string]string{
		ConfigName:            "lint:\n  disable: [orphan_task]\n",
		"plans/registry.yaml": worker("summarizer"),
	})
	l, err := New(Options{})
	require.NoError(t, err)
	src := []byte(`{"tasks": [{"id": "a", "agent": "summarizer", "input": "x"}, {"id": "b", "agent": "writer", "input": "y"}]}`)
	r, err := l.Source(context.Background(), filepath.Join(dir, "plans", "draft.json"), src)
	require.NoError(t, err, "the file does not exist: it is not read")
	assert.Equal(t, []string{"b:unknown_worker"}, issues(r), "the registry beside the path, the configuration above it (orphan_task disabled)")

	r, err = l.Source(context.Background(), "", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{":no_json"}, issues(r), "an empty text is no plan")
}

func TestRun(t *testing.T) {
	tree(t, map[string]string{
		ConfigName: "lint:\n  fail-on: info\n",
		"a.json":   `{"tasks": [{"id": "a", "input": "x"}]}`,
		"b.json":   `{"tasks": [{"id": "a", "input": "Write an outline."}, {"id": "b", "input": "Expand {{results.a}}.", "depends_on": ["a"]}, {"id": "c", "input": "Pick a title."}]}`,
	})
	l, err := New(Options{})
	require.NoError(t, err)
	rs, err := l.Run(context.Background(), []string{"b.json", "a.json"})
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Equal(t, []string{"b.json", "a.json"}, []string{rs[0].Path, rs[1].Path})
	assert.Equal(t, []report.File{rs[0].File, rs[1].File}, rs.Files())
	assert.True(t, rs[0].Fails, "an orphan task, an info")
	assert.False(t, rs[1].Fails)
	assert.True(t, rs.Fails())
	assert.False(t, rs[1:].Fails())
	assert.False(t, Results(nil).Fails())

	rs, err = l.Run(context.Background(), []string{"a.json", "nope.json"})
	assert.Error(t, err)
	assert.Nil(t, rs, "no results beside an error")

	require.NoError(t, os.WriteFile(ConfigName, []byte("lint:\n  fail-on: error\n"), 0o600))
	_, err = l.Run(context.Background(), []string{"a.json"})
	assert.ErrorIs(t, err, ErrInvalidConfig)
}
