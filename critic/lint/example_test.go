package lint_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/critic/lint"
	"github.com/dagent-dev/dagent/critic/report"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
)

// A Go test suite lints the plans of a project as `dagent lint ./...`
// does, and fails on what the project's configuration fails on.
func ExampleLinter_Run() {
	l, err := lint.New(lint.Options{})
	if err != nil {
		panic(err)
	}
	paths, err := lint.Expand([]string{"testdata/project/..."})
	if err != nil {
		panic(err)
	}
	results, err := l.Run(context.Background(), paths)
	if err != nil {
		panic(err)
	}
	for _, r := range results {
		fmt.Printf("%s: score %d/10, %d issues, fails: %t\n", r.Path, r.Report.Score, len(r.Report.Issues), r.Fails)
	}
	fmt.Println("fails:", results.Fails())
	// Output:
	// testdata/project/plans/digest.json: score 9/10, 1 issues, fails: true
	// testdata/project/plans/drafts/broken.json: score 1/10, 1 issues, fails: true
	// testdata/project/plans/legacy/old.json: score 10/10, 0 issues, fails: false
	// testdata/project/plans/notes.json: score 10/10, 0 issues, fails: false
	// fails: true
}

// A service lints a plan it was handed, under a configuration of its own
// and against its own registry, without reading any file.
func ExampleLinter_Source() {
	cfg, err := lint.ParseConfig([]byte("lint:\n  disable: [disconnected_flow]\n"), "")
	if err != nil {
		panic(err)
	}
	reg := registry.New()
	l, err := lint.New(lint.Options{Config: cfg, Catalog: reg})
	if err != nil {
		panic(err)
	}
	pasted := []byte(`{"tasks": [{"id": "notes", "agent": "summarizer", "input": "Summarize."}]}`)
	r, err := l.Source(context.Background(), "pasted.json", pasted)
	if err != nil {
		panic(err)
	}
	for _, is := range r.Report.Issues {
		fmt.Println(is.Severity, is.Check, is.TaskID)
	}
	// Output:
	// critical unknown_worker notes
}

// File lints one file; the report package prints what it found.
func ExampleLinter_File() {
	l, err := lint.New(lint.Options{Settings: lint.Settings{FailOn: critic.GateInfo}})
	if err != nil {
		panic(err)
	}
	r, err := l.File(context.Background(), "testdata/project/plans/digest.json")
	if err != nil {
		panic(err)
	}
	if err := report.Write(os.Stdout, report.GitHub, []report.File{r.File}, report.Options{}); err != nil {
		panic(err)
	}
	fmt.Println("fails:", r.Fails)
	// Output:
	// ::warning file=testdata/project/plans/digest.json,line=3,col=3,title=disconnected_flow::task lines: depends_on: the input uses none of the task's dependencies (list)%0AUse what a task depends on: {{results.ID}} in its input or inputs wiring; drop dependencies it does not need.
	// fails: true
}

// Settings given in code are checked as a file's are.
func ExampleNew() {
	_, err := lint.New(lint.Options{Settings: lint.Settings{Disable: []string{"cycle"}}})
	fmt.Println(err)
	// Output:
	// disable: check "cycle" cannot be disabled: a plan with it does not run
}

func ExampleParseConfig() {
	_, err := lint.ParseConfig([]byte("lint:\n  fail-on: warning\n  disabled: [orphan_task]\n"), ".dagent.yaml")
	fmt.Println(err)
	// Output:
	// .dagent.yaml:3:3: lint.disabled: unknown key; did you mean "disable"?
}

func ExampleFindConfig() {
	cfg, err := lint.FindConfig("testdata/project/plans/legacy")
	if err != nil {
		panic(err)
	}
	wd, _ := os.Getwd()
	fmt.Println(strings.TrimPrefix(cfg.Path, wd+string(os.PathSeparator)))
	fmt.Println(cfg.Registry, cfg.Lint.FailOn, *cfg.Lint.MaxIssues, cfg.Lint.Disable)
	// Output:
	// testdata/project/.dagent.yaml
	// registry.yaml warning 50 [parallel_explosion]
}

func ExampleLoadConfig() {
	cfg, err := lint.LoadConfig("testdata/project/.dagent.yaml")
	if err != nil {
		panic(err)
	}
	for _, e := range cfg.Lint.Exclude {
		fmt.Printf("path %q, task %q: %v\n", e.Path, e.Task, e.Checks)
	}
	// Output:
	// path "plans/legacy/*.json", task "": [all]
	// path "plans/digest.json", task "words": [disconnected_flow]
}

func ExampleRegistryFor() {
	path, err := lint.RegistryFor("testdata/project/plans/notes.json")
	if err != nil {
		panic(err)
	}
	wd, _ := os.Getwd()
	fmt.Println(strings.TrimPrefix(path, wd+string(os.PathSeparator)))
	// Output:
	// testdata/project/registry.yaml
}

func ExampleHostWorkers() {
	p, err := plan.Parse([]byte(`{"agents": {"writer": {"prompt": "You write."}}, "tasks": [
		{"id": "vet", "agent": "go-vet", "input": "vet"},
		{"id": "draft", "agent": "writer", "input": "write"},
		{"id": "lint", "agent": "go-vet", "input": "again"}]}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(lint.HostWorkers(p))
	// Output:
	// [go-vet]
}

func ExampleExpand() {
	paths, err := lint.Expand([]string{"testdata/project/plans/...", "testdata/project/*.json"})
	if err != nil {
		panic(err)
	}
	for _, p := range paths {
		fmt.Println(p)
	}
	// Output:
	// testdata/project/plans/digest.json
	// testdata/project/plans/drafts/broken.json
	// testdata/project/plans/legacy/old.json
	// testdata/project/plans/notes.json
	// testdata/project/package.json
}

func ExampleOnlyPlans() {
	fmt.Println(lint.OnlyPlans([]string{"testdata/project/package.json", "testdata/project/plans/notes.json", "-"}))
	// Output:
	// [testdata/project/plans/notes.json -]
}
