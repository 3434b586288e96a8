package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// Run a plan with a Go function as the agent. Each task's input has the
// outputs of its dependencies expanded into it.
func ExampleRunner_Run() {
	p, err := plan.Parse([]byte(`{
  "tasks": [
    {"id": "greet", "agent": "shout", "input": "hello"},
    {"id": "name",  "agent": "shout", "input": "world"},
    {"id": "join",  "agent": "shout", "input": "{{results.greet}}, {{results.name}}!", "depends_on": ["greet", "name"]}
  ]
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	shout := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: strings.ToUpper(req.Input)}, nil
	})
	res, err := runner.New(runner.WithAgent("shout", shout)).RunPlan(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status)
	fmt.Println(res.Tasks["join"].Output)
	// Output:
	// completed
	// HELLO, WORLD!
}

// A verification predicate judges each output; on_verification_failure
// "retry" runs the task again, with the same input and the previous
// attempt's diagnosis beside it.
func ExampleRunner_Run_verification() {
	p, err := plan.Parse([]byte(`{
  "tasks": [
    {"id": "ideas", "agent": "brainstorm", "input": "List names for a cat.",
     "verification": "(if (>= (count (get data/result \"names\")) 3) true (str \"expected 3 names, got \" (count (get data/result \"names\"))))",
     "on_verification_failure": "retry", "max_retries": 2}
  ]
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	brainstorm := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		fmt.Printf("attempt %d: %q %s %q\n", req.Attempt, req.Input, req.Failure, req.Diagnosis)
		if req.Diagnosis == "" {
			return agent.Result{Output: map[string]any{"names": []any{"Tom"}}}, nil
		}
		return agent.Result{Output: map[string]any{"names": []any{"Tom", "Felix", "Luna"}}}, nil
	})
	res, err := runner.New(
		runner.WithAgent("brainstorm", brainstorm),
		runner.WithBackoff(runner.Backoff{}), // retry at once
	).RunPlan(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	ideas := res.Tasks["ideas"]
	fmt.Println(res.Status, ideas.Status, ideas.Attempts)
	fmt.Println(ideas.Output)
	// Output:
	// attempt 1: "List names for a cat."  ""
	// attempt 2: "List names for a cat." verification "expected 3 names, got 1"
	// completed done 2
	// map[names:[Tom Felix Luna]]
}

// A human_review task without a decision leaves the run waiting. Running the
// plan again with the previous outputs and the decision resumes it: nothing
// that is done runs again.
// A task's when condition decides from its dependencies' results whether
// it runs: one that does not hold skips the task, its agent never called,
// with the class condition_not_met. Its dependents run all the same,
// told in the request which dependency was skipped.
func ExampleRunner_Run_condition() {
	p, err := plan.Parse([]byte(`{
  "tasks": [
    {"id": "triage", "agent": "desk", "input": "Rate the incident"},
    {"id": "page", "agent": "desk", "input": "Page the on-call engineer", "depends_on": ["triage"],
     "when": "(if (= (get data/depends \"triage\") \"high\") true \"the incident is not severe\")"},
    {"id": "log", "agent": "desk", "input": "Log the incident", "depends_on": ["page"]}
  ]
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	desk := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		fmt.Printf("%s runs (skipped dependencies: %v)\n", req.TaskID, req.Skipped)
		return agent.Result{Output: "low"}, nil
	})
	res, err := runner.New(runner.WithAgent("desk", desk)).RunPlan(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	page := res.Tasks["page"]
	fmt.Println(res.Status)
	fmt.Println(page.Status, page.Class, page.Attempts)
	fmt.Println(page.Err)
	fmt.Println(errors.Is(page.Err, runner.ErrConditionNotMet))
	// Output:
	// triage runs (skipped dependencies: [])
	// log runs (skipped dependencies: [page])
	// completed
	// skipped condition_not_met 0
	// condition not met: the incident is not severe
	// true
}

func ExampleWithReviews() {
	p, err := plan.Parse([]byte(`{
  "tasks": [
    {"id": "draft",   "agent": "writer", "input": "Write a tagline"},
    {"id": "approve", "type": "human_review", "input": "Is this tagline good? {{results.draft}}", "depends_on": ["draft"]},
    {"id": "publish", "agent": "writer", "input": "Publish: {{results.draft}}", "depends_on": ["approve"]}
  ]
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	writer := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		fmt.Println("run", req.TaskID)
		if req.TaskID == "draft" {
			return agent.Result{Output: "Plans that run themselves."}, nil
		}
		return agent.Result{Output: "published"}, nil
	})
	rn := runner.New(runner.WithAgent("writer", writer))
	res, err := rn.RunPlan(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status)
	for _, r := range res.PendingReviews {
		fmt.Printf("review %s: %s\n", r.TaskID, r.Prompt)
	}

	// Later, once a person has decided:
	resumed, err := rn.RunPlan(context.Background(), p,
		runner.WithInitialResults(res.Outputs()),
		runner.WithReviews(map[string]runner.Decision{"approve": runner.Approve()}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resumed.Status, resumed.Tasks["publish"].Output)
	// Output:
	// run draft
	// waiting
	// review approve: Is this tagline good? Plans that run themselves.
	// run publish
	// completed published
}

// A decision as JSON gives it, from a file or an HTTP request.
func ExampleParseDecision() {
	for _, v := range []any{
		"approve",
		map[string]any{"approved": false, "comment": "too long"},
		map[string]any{"approved": true, "output": "Plans that run."},
		"maybe",
	} {
		d, err := runner.ParseDecision(v)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("approved=%v comment=%q output=%v\n", d.Approved, d.Comment, d.Output)
	}
	// Output:
	// approved=true comment="" output=approve
	// approved=false comment="too long" output=map[approved:false comment:too long]
	// approved=true comment="" output=Plans that run.
	// error: decision "maybe" is neither approve nor reject
}

// An observer sees every event of the run in order, on its own goroutine;
// Run returns once it has seen the last one.
func ExampleWithObserver() {
	p, err := plan.Parse([]byte(`{
  "tasks": [
    {"id": "fetch",     "agent": "work", "input": "fetch", "on_failure": "retry"},
    {"id": "summarize", "agent": "work", "input": "summarize", "depends_on": ["fetch"]}
  ]
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	work := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		if req.TaskID == "fetch" && req.Attempt == 1 {
			return agent.Result{}, fmt.Errorf("connection reset")
		}
		return agent.Result{Output: req.TaskID + " done"}, nil
	})
	log := runner.ObserverFunc(func(e runner.Event) {
		switch e.Kind {
		case runner.EventRunStarted:
			fmt.Println(e.Seq, e.Kind)
		case runner.EventRunFinished:
			fmt.Println(e.Seq, e.Kind, e.Status)
		case runner.EventPhaseStarted, runner.EventPhaseFinished:
			fmt.Println(e.Seq, e.Kind, e.Phase)
		case runner.EventTaskRetried:
			fmt.Println(e.Seq, e.Kind, e.TaskID, "attempt", e.Attempt, "after:", e.Diagnosis)
		case runner.EventTaskFinished:
			fmt.Println(e.Seq, e.Kind, e.TaskID, e.Output)
		default:
			fmt.Println(e.Seq, e.Kind, e.TaskID)
		}
	})
	_, err = runner.New(
		runner.WithAgent("work", work),
		runner.WithObserver(log),
		runner.WithBackoff(runner.Backoff{}),
	).RunPlan(context.Background(), p)
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 1 run_started
	// 2 phase_started 0
	// 3 task_started fetch
	// 4 task_retried fetch attempt 2 after: connection reset
	// 5 task_finished fetch fetch done
	// 6 phase_finished 0
	// 7 phase_started 1
	// 8 task_started summarize
	// 9 task_finished summarize summarize done
	// 10 phase_finished 1
	// 11 run_finished completed
}

// Run ids, initial results and review decisions are given to each run, so
// one Runner serves many runs at once.
func ExampleWithRunID() {
	p, err := plan.Parse([]byte(`{"tasks": [{"id": "greet", "agent": "echo", "input": "hello"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	echo := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: req.Input}, nil
	})
	rn := runner.New(runner.WithAgent("echo", echo))
	for _, id := range []string{"nightly-1", "nightly-2"} {
		res, err := rn.RunPlan(context.Background(), p, runner.WithRunID(id))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.RunID, res.Status)
	}
	// Output:
	// nightly-1 completed
	// nightly-2 completed
}

// A failed task's result names the kind of its failure; Classify names the
// kind of any error.
func ExampleClassify() {
	p, err := plan.Parse([]byte(`{"tasks": [{"id": "fetch", "agent": "slow", "input": "x", "timeout": "10ms"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	slow := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		<-ctx.Done()
		return agent.Result{}, ctx.Err()
	})
	res, err := runner.New(runner.WithAgent("slow", slow)).RunPlan(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Tasks["fetch"].Status, res.Tasks["fetch"].Class)
	fmt.Println(runner.Classify(fmt.Errorf("task x: %w", runner.ErrRejected)))
	// Output:
	// failed timeout
	// rejected
}

// An error read back as its text keeps the class it had: a reader of a
// journal, which keeps both, gives them back together.
func ExampleClassError() {
	text := errors.New("task review: rejected by the reviewer: off brand")
	fmt.Println(runner.Classify(text))
	fmt.Println(runner.Classify(&runner.ClassError{Class: runner.ClassRejected, Err: text}))
	// Output:
	// agent_error
	// rejected
}

// A result marshals to the JSON form dagent run --format json prints, and
// reads back from it: errors as their text, durations in milliseconds.
func ExampleResult_MarshalJSON() {
	res := runner.Result{
		RunID:    "r1",
		Status:   runner.StatusFailed,
		Err:      errors.New("task b: exit status 1"),
		Duration: 1500 * time.Millisecond,
		Tasks: map[string]*runner.TaskResult{
			"a": {Status: runner.TaskDone, Attempts: 1, Output: "ok", Duration: 20 * time.Millisecond},
			"b": {Status: runner.TaskFailed, Attempts: 1, Err: errors.New("exit status 1"), Class: runner.ClassAgentError, Diagnosis: "exit status 1"},
		},
	}
	b, err := json.Marshal(res)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))

	var back runner.Result
	if err := json.Unmarshal(b, &back); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back.Err, back.Tasks["b"].ID, back.Duration)
	// Output:
	// {"version":1,"run_id":"r1","status":"failed","error":"task b: exit status 1","duration_ms":1500,"tasks":{"a":{"status":"done","attempts":1,"output":"ok","error":null,"diagnosis":"","duration_ms":20},"b":{"status":"failed","attempts":1,"output":null,"error":"exit status 1","class":"agent_error","diagnosis":"exit status 1","duration_ms":0}},"pending_reviews":[],"replan":null}
	// task b: exit status 1 b 1.5s
}

// WithMaxRequestBytes bounds what one task is handed: a sink fed by
// outputs that add up to more fails at once, before its agent is called.
func ExampleWithMaxRequestBytes() {
	p, err := plan.Parse([]byte(`{
  "tasks": [
    {"id": "a", "agent": "fetch", "input": "page 1"},
    {"id": "b", "agent": "fetch", "input": "page 2"},
    {"id": "sum", "agent": "fetch", "input": "sum the pages", "depends_on": ["a", "b"]}
  ]
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fetch := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: strings.Repeat("x", 1<<10)}, nil
	})
	rn := runner.New(runner.WithAgent("fetch", fetch), runner.WithMaxRequestBytes(1<<10))
	res, err := rn.RunPlan(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Tasks["sum"].Status, errors.Is(res.Tasks["sum"].Err, runner.ErrRequestTooLarge))
	fmt.Println(res.Tasks["sum"].Err)
	// Output:
	// failed true
	// request too large: the request of task "sum" is over 1024 bytes, the limit: its dependencies' outputs, inputs and templates carry too much
}

// upper is a Host that runs each attempt at once, on the caller's
// goroutine, as a workflow runs an activity and waits for it. Its clock is
// fixed, as a workflow's is while it decides.
type upper struct{ now time.Time }

func (h upper) Attempt(req agent.Request, _ time.Duration) runner.Reply {
	return runner.Reply{Output: strings.ToUpper(req.Input)}
}

func (upper) Judge(runner.JudgeRequest, time.Duration) (runner.Verdict, error) {
	return runner.Verdict{Pass: true}, nil
}

func (upper) Wait(time.Duration) runner.WaitEnd { return runner.WaitDone }
func (h upper) Now() time.Time                  { return h.now }

// Drive a run's core without the Runner: the loop of a workflow, which
// takes the tasks that may start, runs each through its Host, settles it,
// and opens the next phase once nothing runs. Tasks taken together could
// run concurrently, each RunTask on a coroutine of its own.
func ExampleNewCore() {
	p, err := plan.Parse([]byte(`{
  "tasks": [
    {"id": "greet", "agent": "shout", "input": "hello"},
    {"id": "name",  "agent": "shout", "input": "world"},
    {"id": "join",  "agent": "shout", "input": "{{results.greet}}, {{results.name}}!", "depends_on": ["greet", "name"]}
  ]
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := p.DAG(plan.WithWorkers("shout"))
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var events []runner.EventKind
	c, err := runner.NewCore(d, runner.CoreConfig{
		RunID: "run-1", Started: now, Concurrency: 2,
		Observe: func(e runner.Event) { events = append(events, e.Kind) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	h := upper{now: now}
	c.Advance(now)
	for {
		var taken []int
		for i := c.Take(now); i >= 0; i = c.Take(now) {
			taken = append(taken, i)
		}
		for _, i := range taken {
			c.Settle(c.RunTask(h, i), now)
		}
		if c.Running() == 0 && len(taken) == 0 && !c.Advance(now) {
			break
		}
	}
	res := c.Result(now)
	fmt.Println(res.Status, res.Tasks["join"].Output)
	fmt.Println(events[0], events[len(events)-1], len(events))
	// Output:
	// completed HELLO, WORLD!
	// phase_started phase_finished 10
}

// The decisions of a run's reviews, from a JSON file or an HTTP request.
func ExampleParseDecisions() {
	decisions, err := runner.ParseDecisions([]byte(`{"draft": "approve", "legal": {"approved": false, "comment": "too long"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(decisions["draft"].Approved, decisions["legal"].Approved, decisions["legal"].Comment)

	_, err = runner.ParseDecisions([]byte(`{"draft": "maybe"}`))
	fmt.Println(err)
	// Output:
	// true false too long
	// task draft: decision "maybe" is neither approve nor reject
}

// A run goes on from the result of an earlier one: the outputs of its
// done tasks are the new run's initial results, under the same run id.
func ExampleParseInitialResults() {
	earlier := `{"version": 1, "run_id": "r1", "status": "waiting",
		"tasks": {"draft": {"status": "done", "output": "Plans that run."}, "review": {"status": "waiting"}}}`
	outputs, runID, err := runner.ParseInitialResults([]byte(earlier))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(runID, outputs)

	outputs, runID, _ = runner.ParseInitialResults([]byte(`{"draft": "Plans that run."}`))
	fmt.Printf("%q %v\n", runID, outputs)
	// Output:
	// r1 map[draft:Plans that run.]
	// "" map[draft:Plans that run.]
}
