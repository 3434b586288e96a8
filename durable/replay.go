package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// ErrNotJournaled: a replay asked a worker or a tool for something the
// journal has no answer to — the run did not get that far, or the replay
// took another path.
var ErrNotJournaled = errors.New("not in the journal")

// Report is what a replay found.
type Report struct {
	RunID string
	// Identical says the replay found no difference.
	Identical bool
	// Status is the replay's; empty when it ran no plan.
	Status         Status
	RecordedStatus Status
	// Differences lists how the replay diverged, in the order found.
	Differences []string
	// Exchanges counts the LLM exchanges the journal holds.
	Exchanges int
	// WorkersRerun counts the worker and tool calls the replay ran for real:
	// none unless [WithRerunWorkers].
	WorkersRerun int
	// Outcome is the replay's outcome; nil when it ran no plan.
	Outcome *Outcome
}

// Replay runs the journaled run id again from its start, with its spec,
// and compares what happens with the journal. It has no side effects: the
// LLM requests are answered from the journaled exchanges, the catalog's
// workers and tools and the Go workers from the journaled results (their
// calls run for real only with [WithRerunWorkers]), human reviews get the
// decisions they got, and the replay is not journaled. What runs again is
// the orchestration: scheduling, preconditions, predicates, failure
// policies, the planner's decisions and the repairs.
//
// The replay diverges when a request was not journaled (a prompt changed,
// or the replay took another path), when the run's status, a task's status
// or output, or a repair plan differs from the journal's. For a run that
// did not finish, only the tasks it committed are compared. The error is
// for a replay that could not start: the run is not in s, its catalog
// cannot be resolved or is not the one it started on ([ErrCatalogChanged]).
func Replay(ctx context.Context, s store.Store, id string, opts ...Option) (*Report, error) {
	c := newConfig(opts)
	r, err := Load(ctx, s, id)
	if err != nil {
		return nil, err
	}
	reg, err := c.resolve(ctx, &r.Spec, r.ID)
	if err != nil {
		return nil, err
	}
	replayer, err := store.Replayer(r.Record)
	if err != nil {
		return nil, err
	}
	rep := &Report{RunID: r.ID, RecordedStatus: r.Status, Exchanges: len(r.Record.Exchanges)}
	w := &watcher{c: replayer}
	c.llm = func(string, bool) (llm.Client, error) { return w, nil }
	initial, reviews, err := r.replayInputs()
	if err != nil {
		return nil, err
	}
	c.reviews = reviews
	plans := &planLog{}
	l := &launch{c: c, spec: r.Spec, reg: reg, runID: r.ID, current: r.Spec.Plan, initial: initial, plans: plans}
	if l.current == nil && len(r.Plans) > 0 && slices.ContainsFunc(r.Record.Events, func(e store.Event) bool { return e.Kind == string(EventPlanCached) }) {
		// The run took its first plan from the cache, not the planner:
		// no exchange of the journal plans it again.
		l.current = r.Plans[0]
	}
	var rerun atomic.Int64
	ans, err := newAnswers(r)
	if err != nil {
		return nil, err
	}
	l.workers = func(reg *registry.Registry) *registry.Registry {
		if c.rerun {
			return counted(reg, &rerun)
		}
		return rebuild(reg, func(name string, _ registry.Worker) agent.Agent { return ans.worker(name) },
			func(name string, _ registry.Tool) registry.ToolFunc { return ans.tool(name) })
	}
	out, runErr := l.exec(ctx)
	rep.WorkersRerun = int(rerun.Load())
	rep.Differences = append(rep.Differences, w.missing()...)
	rep.Differences = append(rep.Differences, ans.missing()...)
	switch {
	case out == nil || out.Result == nil:
		why := "no plan ran"
		if runErr != nil {
			why = runErr.Error()
		} else if out != nil && out.Planned != nil {
			why = "the planner answered " + string(out.Planned.Route)
		}
		rep.Differences = append(rep.Differences, "the replay ran no plan: "+why)
	default:
		rep.Outcome, rep.Status = out, out.Status
		rep.Differences = append(rep.Differences, r.compare(out.Result)...)
		rep.Differences = append(rep.Differences, r.comparePlans(plans.plans)...)
	}
	rep.Identical = len(rep.Differences) == 0
	return rep, nil
}

// replayInputs are what a replay starts with: the outputs the run was
// given rather than produced (done in no attempt), and the decisions its
// reviews got, read from their final states.
func (r *Run) replayInputs() (map[string]any, map[string]runner.Decision, error) {
	reviews := map[string]runner.Decision{}
	initial := map[string]any{}
	review := map[string]bool{}
	plans := r.Plans
	if r.Spec.Plan != nil {
		plans = append([]*plan.Plan{r.Spec.Plan}, plans...)
	}
	for _, p := range plans {
		for _, t := range p.Tasks {
			if t.Type == plan.TypeHumanReview {
				review[t.ID] = true
			}
		}
	}
	for _, t := range r.Record.Commits {
		if t.Version != 0 {
			continue
		}
		var out any
		if t.Status == string(runner.TaskDone) {
			var err error
			if out, err = decodeOutput(t.Output); err != nil {
				return nil, nil, fmt.Errorf("run %s: task %s: %w", r.ID, t.ID, err)
			}
		}
		switch {
		case t.Status == string(runner.TaskDone) && t.Attempts == 0:
			initial[t.ID] = out
		case !review[t.ID]:
		case t.Status == string(runner.TaskDone):
			reviews[t.ID] = runner.Decision{Approved: true, Output: out}
		case strings.HasPrefix(t.Error, runner.ErrRejected.Error()):
			comment := strings.TrimPrefix(strings.TrimPrefix(t.Error, runner.ErrRejected.Error()), ": ")
			reviews[t.ID] = runner.Decision{Comment: comment}
		}
	}
	return initial, reviews, nil
}

// compare lists how the replay's result res differs from the journal: the
// run's status, and each task's status and output. A run that did not
// finish is compared on the tasks it committed only.
func (r *Run) compare(res *runner.Result) []string {
	var diffs []string
	finished := r.Status.Finished()
	if finished && string(r.Status) != string(res.Status) {
		diffs = append(diffs, fmt.Sprintf("the run %s; it was %s", res.Status, r.Status))
	}
	order := append([]string{}, r.Order...)
	for id := range res.Tasks {
		if _, ok := r.Tasks[id]; !ok {
			order = append(order, id)
		}
	}
	for _, id := range order {
		v, recorded := r.Tasks[id]
		if !finished && !v.Committed {
			continue
		}
		want := string(runner.TaskPending)
		if recorded {
			want = v.Status
		}
		if want == string(runner.TaskRunning) {
			want = string(runner.TaskPending) // in flight when the run stopped
		}
		got := string(runner.TaskPending)
		t := res.Tasks[id]
		if t != nil {
			got = string(t.Status)
		}
		if got != want {
			diffs = append(diffs, fmt.Sprintf("task %s is %s; it was %s", id, got, want))
			continue
		}
		if got != string(runner.TaskDone) {
			continue
		}
		gotJSON, err := jsonv.Marshal(t.Output)
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("task %s: its output is not JSON: %v", id, err))
			continue
		}
		if !sameJSON(gotJSON, v.Output) {
			diffs = append(diffs, fmt.Sprintf("task %s output %s; it was %s", id, prose.Excerpt(string(compact(gotJSON)), 120), prose.Excerpt(string(compact(v.Output)), 120)))
		}
	}
	return diffs
}

// comparePlans lists how the plans the replay adopted differ from the
// journal's versions.
func (r *Run) comparePlans(got [][]byte) []string {
	want := r.Record.Plans
	var diffs []string
	for k := 0; k < max(len(got), len(want)); k++ {
		switch {
		case k >= len(want):
			if r.Status.Finished() {
				diffs = append(diffs, fmt.Sprintf("the replay adopted plan version %d, which the run did not", k))
			}
		case k >= len(got):
			diffs = append(diffs, fmt.Sprintf("the run adopted plan version %d, which the replay did not", k))
		case !sameJSON(got[k], want[k].Plan):
			diffs = append(diffs, fmt.Sprintf("plan version %d differs from the run's", k))
		}
	}
	return diffs
}

// planLog keeps the plans a replay adopts, as the journal would.
type planLog struct {
	mu    sync.Mutex
	plans [][]byte
}

func (p *planLog) CommitPlan(_ context.Context, c executor.PlanCommit) error {
	raw, err := c.Plan.Canonical()
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.plans) <= c.Version {
		p.plans = append(p.plans, nil)
	}
	p.plans[c.Version] = raw
	return nil
}

// watcher is the LLM of a replay: the journal's exchanges, noting every
// request that was not journaled.
type watcher struct {
	c llm.Client

	mu    sync.Mutex
	notes []string
}

func (w *watcher) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := w.c.Complete(ctx, req)
	if errors.Is(err, llm.ErrNotRecorded) {
		key, _ := llm.RequestKey(req)
		last := ""
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if req.Messages[i].Role == llm.RoleUser {
				last = req.Messages[i].Content
				break
			}
		}
		w.mu.Lock()
		w.notes = append(w.notes, fmt.Sprintf("a request that was not recorded (key %.12s): last user message %q", key, prose.Excerpt(strings.ReplaceAll(last, "\n", " "), 100)))
		w.mu.Unlock()
	}
	return resp, err
}

func (w *watcher) missing() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.notes
}

// answers stands in for a run's workers and tools in a replay: a worker's
// attempt gets the state the journal committed for its task in the same
// plan version, a tool call the result the journaled exchanges gave the
// model for the same call.
type answers struct {
	base    string
	commits map[answerKey]store.Task
	tools   map[string][]toolResult // by tool name and arguments, in order

	mu    sync.Mutex
	used  map[string]int
	notes []string
}

type answerKey struct {
	version int
	task    string
}

func newAnswers(r *Run) (*answers, error) {
	a := &answers{base: r.ID, commits: map[answerKey]store.Task{}, tools: map[string][]toolResult{}, used: map[string]int{}}
	for _, t := range r.Record.Commits {
		a.commits[answerKey{t.Version, t.ID}] = t
	}
	if err := a.readTools(r.Record.Exchanges); err != nil {
		return nil, fmt.Errorf("run %s: %w", r.ID, err)
	}
	return a, nil
}

// readTools finds each tool call the model made in the exchanges and the
// result the next request gave it.
func (a *answers) readTools(exchanges []store.Exchange) error {
	type call struct{ name, key string }
	calls := map[string]call{} // by call id
	for _, x := range exchanges {
		var line struct {
			Request  *llm.Request  `json:"request"`
			Response *llm.Response `json:"response"`
		}
		if err := json.Unmarshal(x.Exchange, &line); err != nil {
			return fmt.Errorf("LLM exchange %d: %w", x.Seq, err)
		}
		if line.Request != nil {
			for _, m := range line.Request.Messages {
				if m.Role != llm.RoleTool {
					continue
				}
				if call, ok := calls[m.ToolCallID]; ok {
					a.tools[call.key] = append(a.tools[call.key], unwrapTool(call.name, m.Content))
					delete(calls, m.ToolCallID)
				}
			}
		}
		if line.Response != nil {
			for _, tc := range line.Response.Message.ToolCalls {
				calls[tc.ID] = call{tc.Name, toolKey(tc.Name, []byte(tc.Arguments))}
			}
		}
	}
	return nil
}

// toolResult is what a tool call gave: its text, or its error's.
type toolResult struct {
	text   string
	failed bool
}

// toolFailed begins the message of a tool call that failed.
const toolFailed = "error: the tool failed; its error follows as data.\n"

// unwrapTool reads what a tool call gave back from the message the model
// got, which holds it as a block of data (see [llm.Data]).
func unwrapTool(name, content string) toolResult {
	body, failed := strings.CutPrefix(content, toolFailed)
	open := `<data source="tool.` + name + `"`
	if !strings.HasPrefix(body, open) {
		return toolResult{text: content}
	}
	_, inner, _ := strings.Cut(body, ">\n")
	inner = strings.TrimSuffix(strings.TrimSuffix(inner, "</data>"), "\n")
	return toolResult{text: inner, failed: failed}
}

func toolKey(name string, args []byte) string {
	return name + "\x00" + string(canonical(args))
}

func (a *answers) worker(name string) agent.Agent {
	return agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		v := a.version(req.RunID)
		t, ok := a.commits[answerKey{v, req.TaskID}]
		if !ok || t.Status != string(runner.TaskDone) && t.Status != string(runner.TaskFailed) {
			a.note(fmt.Sprintf("worker %s was asked for task %s (plan version %d), which the run never finished", name, req.TaskID, v))
			return agent.Result{}, fmt.Errorf("task %s: %w", req.TaskID, ErrNotJournaled)
		}
		if t.Status == string(runner.TaskFailed) && len(t.Output) == 0 {
			return agent.Result{}, errors.New(t.Error)
		}
		out, err := decodeOutput(t.Output)
		if err != nil {
			return agent.Result{}, err
		}
		return agent.Result{Output: out}, nil
	})
}

func (a *answers) tool(name string) registry.ToolFunc {
	return func(_ context.Context, args json.RawMessage) (string, error) {
		key := toolKey(name, args)
		a.mu.Lock()
		defer a.mu.Unlock()
		results := a.tools[key]
		if len(results) == 0 {
			a.notes = append(a.notes, fmt.Sprintf("tool %s was called with arguments %s, which the run never did", name, prose.Excerpt(string(args), 100)))
			return "", fmt.Errorf("tool %s: %w", name, ErrNotJournaled)
		}
		i := min(a.used[key], len(results)-1)
		a.used[key]++
		if results[i].failed {
			return "", errors.New(results[i].text)
		}
		return results[i].text, nil
	}
}

// version is the plan version of a run id: the base id runs version 0,
// base.k the k-th repair.
func (a *answers) version(runID string) int {
	k, err := strconv.Atoi(strings.TrimPrefix(runID, a.base+"."))
	if err != nil || !strings.HasPrefix(runID, a.base+".") {
		return 0
	}
	return k
}

func (a *answers) note(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notes = append(a.notes, s)
}

func (a *answers) missing() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.notes
}

// counted returns reg with every worker and tool call counted in n, for a
// replay that runs them for real.
func counted(reg *registry.Registry, n *atomic.Int64) *registry.Registry {
	return rebuild(reg, func(_ string, w registry.Worker) agent.Agent {
		return agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
			n.Add(1)
			return w.Agent.Run(ctx, req)
		})
	}, func(_ string, t registry.Tool) registry.ToolFunc {
		return func(ctx context.Context, args json.RawMessage) (string, error) {
			n.Add(1)
			return t.Run(ctx, args)
		}
	})
}

// decodeOutput reads a journaled output, numbers kept exact as agents'
// outputs are.
func decodeOutput(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	v, err := jsonv.DecodeBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("its journaled output is not JSON: %w", err)
	}
	return v, nil
}

// sameJSON reports whether a and b are the same JSON value (numbers
// compared as written).
func sameJSON(a, b []byte) bool {
	return bytes.Equal(canonical(a), canonical(b))
}

func canonical(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	v, err := jsonv.DecodeBytes(b)
	if err != nil {
		return b
	}
	out, err := jsonv.Marshal(v)
	if err != nil {
		return b
	}
	return out
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}
