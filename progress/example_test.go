package progress_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/progress"
	"github.com/dagent-dev/dagent/runner"
)

// A host shows its runs as dagent does: the line log on standard error
// while the plan runs, the summary on standard output when it ends.
func Example() {
	p, err := plan.Parse([]byte(`{"tasks": [
		{"id": "greet", "agent": "shout", "input": "hello"},
		{"id": "join", "agent": "shout", "input": "{{results.greet}}!", "depends_on": ["greet"]}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	shout := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: strings.ToUpper(req.Input)}, nil
	})
	log := progress.NewPrinter(os.Stderr)
	defer log.Close()
	res, err := runner.New(runner.WithAgent("shout", shout), runner.WithObserver(log)).RunPlan(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := progress.WriteSummary(os.Stdout, progress.Summary{Plan: p, Result: res}); err != nil {
		fmt.Println(err)
	}
}

// The printer writes a line per event, after the time since the run
// started. Here the events are made by hand, at known times.
func ExampleNewPrinter() {
	start := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	log := progress.NewPrinter(os.Stdout, progress.WithHeartbeat(0))
	defer log.Close()
	for _, e := range []runner.Event{
		{Kind: runner.EventRunStarted, Time: start, RunID: "r1"},
		{Kind: runner.EventTaskStarted, Time: at(time.Millisecond), TaskID: "fetch"},
		{Kind: runner.EventTaskRetried, Time: at(1200 * time.Millisecond), TaskID: "fetch", Attempt: 2, Diagnosis: "timeout"},
		{Kind: runner.EventTaskFinished, Time: at(2500 * time.Millisecond), TaskID: "fetch", Duration: 2499 * time.Millisecond},
		{Kind: runner.EventTaskFailed, Time: at(3 * time.Second), TaskID: "post", Err: errors.New("exit status 1\x1b[2J")},
		{Kind: runner.EventRunFinished, Time: at(3 * time.Second), Status: runner.StatusFailed},
	} {
		log.Observe(e)
	}
	// Output:
	//       0s  run r1 started
	//      1ms  fetch: started
	//     1.2s  fetch: retry 1 after: timeout
	//     2.5s  fetch: done in 2.5s
	//       3s  post: failed: exit status 1\u001b[2J
	//       3s  run failed
}

func ExampleWriteSummary() {
	p, err := plan.Parse([]byte(`{"tasks": [
		{"id": "fetch", "agent": "web", "input": "news"},
		{"id": "digest", "agent": "writer", "input": "{{results.fetch}}", "depends_on": ["fetch"]}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	res := &runner.Result{
		Status:   runner.StatusFailed,
		Err:      errors.New("task fetch failed"),
		Duration: 3210 * time.Millisecond,
		Tasks: map[string]*runner.TaskResult{
			"fetch":  {ID: "fetch", Status: runner.TaskFailed, Attempts: 2, Duration: 1200 * time.Millisecond, Err: errors.New("exit status 1")},
			"digest": {ID: "digest", Status: runner.TaskSkipped, Err: errors.New("dependency fetch failed")},
		},
	}
	if err := progress.WriteSummary(os.Stdout, progress.Summary{Plan: p, Result: res}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// TASK    STATUS   ATTEMPTS  DURATION  DIAGNOSIS
	// fetch   failed   2         1.2s      exit status 1
	// digest  skipped  0         0s        dependency fetch failed
	//
	// failed after 3.21s: task fetch failed
}

// A host that logs in its own format takes the lines alone.
func ExampleLine() {
	fmt.Println(progress.Line(runner.Event{Kind: runner.EventTaskVerified, TaskID: "fetch", Diagnosis: "expected 3 items, got 1"}))
	fmt.Println(progress.Line(runner.Event{Kind: executor.EventRepairAdopted, TaskID: "fetch", Class: runner.ClassAgentError, Version: 1, NewTasks: 2}))
	// Output:
	// fetch: verification failed: expected 3 items, got 1
	// replan 1 after fetch failed (agent_error): 2 tasks added
}

func ExampleHaltReason() {
	fmt.Println(progress.HaltReason(executor.HaltSameFailure))
	fmt.Println(progress.HaltReason(executor.HaltToolRefused))
	fmt.Println(progress.HaltReason("rate_limited"))
	// Output:
	// a task failed the same way as before a replan
	// an agent kept calling tools it may not use, perhaps told to by its data
	// a task failed with class rate_limited, which halts
}

func ExampleRound() {
	fmt.Println(progress.Round(1234567 * time.Microsecond))
	fmt.Println(progress.Round(83 * time.Second / 2))
	// Output:
	// 1.23s
	// 41.5s
}

// A heartbeat every 10 seconds: a task that runs 25 seconds gets two
// lines, "slow: running for 10s" and "slow: running for 20s".
func ExampleWithHeartbeat() {
	log := progress.NewPrinter(os.Stderr, progress.WithHeartbeat(10*time.Second))
	defer log.Close()
	_ = runner.New(runner.WithObserver(log))
}

// The host's own lines go between the event lines, made visible too.
func ExamplePrinter_Println() {
	log := progress.NewPrinter(os.Stdout)
	defer log.Close()
	log.Println("planned 3 tasks \x1b[1mnow\x1b[0m")
	// Output:
	// planned 3 tasks \u001b[1mnow\u001b[0m
}

func ExampleText() {
	fmt.Println(progress.Text("a plain summary"))
	fmt.Println(progress.Text(map[string]any{"count": 2}))
	// Output:
	// a plain summary
	// {
	//   "count": 2
	// }
}

// A host words the halts of its executor in its own terms: the settings
// its users know.
func ExampleWords() {
	w := progress.Words{HaltReason: func(halt string) string {
		if halt == executor.HaltMaxReplans {
			return "the replans reached replan.max in settings.yaml"
		}
		return progress.HaltReason(halt)
	}}
	fmt.Println(w.Line(runner.Event{Kind: executor.EventHalted, Halt: executor.HaltMaxReplans}))
	fmt.Println(w.Line(runner.Event{Kind: executor.EventHalted, Halt: executor.HaltBudget}))
	// Output:
	// replanning halted (max_replans): the replans reached replan.max in settings.yaml
	// replanning halted (budget_exceeded): the LLM budget is spent
}
