package plan_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
)

// vtTask is a task built in Go with Parse's defaults and the dependencies.
func vtTask(id string, deps ...string) plan.Task {
	t := plan.NewTask(id, "Do "+id)
	t.DependsOn = deps
	return t
}

// vtPlan is a plan of the tasks.
func vtPlan(tasks ...plan.Task) *plan.Plan {
	return &plan.Plan{Tasks: tasks}
}

// vtWith returns the task changed by f.
func vtWith(t plan.Task, f func(*plan.Task)) plan.Task {
	f(&t)
	return t
}

// vtProblem is a Problem without its position, for tables.
type vtProblem struct {
	Code    plan.Code
	TaskID  string
	Field   string
	Message string
}

func vtProblems(err error) []vtProblem {
	var out []vtProblem
	for _, p := range plan.Problems(err) {
		out = append(out, vtProblem{p.Code, p.TaskID, p.Field, p.Message})
	}
	return out
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		plan *plan.Plan
		opts []plan.Option
		want []vtProblem // nil: valid
	}{
		{
			name: "valid chain",
			plan: vtPlan(vtTask("a"), vtTask("b", "a"), vtTask("c", "b", "a")),
		},

		// empty_plan
		{
			name: "empty plan",
			plan: &plan.Plan{Mission: "nothing to do"},
			want: []vtProblem{{plan.CodeEmptyPlan, "", "tasks", "the plan has no tasks"}},
		},
		{
			name: "empty task list",
			plan: &plan.Plan{Tasks: []plan.Task{}},
			want: []vtProblem{{plan.CodeEmptyPlan, "", "tasks", "the plan has no tasks"}},
		},

		// invalid_id
		{
			name: "empty id",
			plan: vtPlan(vtTask("")),
			want: []vtProblem{{plan.CodeInvalidID, "#1", "id", "the task has an empty id"}},
		},
		{
			name: "id with surrounding space",
			plan: vtPlan(vtTask(" a")),
			want: []vtProblem{{plan.CodeInvalidID, " a", "id", `id " a" has leading or trailing space`}},
		},
		{
			name: "id with a control character",
			plan: vtPlan(vtTask("a\tb")),
			want: []vtProblem{{plan.CodeInvalidID, "a\tb", "id", `id "a\tb" holds control characters`}},
		},
		{
			name: "id with an escape sequence",
			plan: vtPlan(vtTask("a\x1b]0;pwned\x07")),
			want: []vtProblem{{plan.CodeInvalidID, "a\x1b]0;pwned\x07", "id", `id "a\x1b]0;pwned\a" holds control characters`}},
		},
		{
			name: "id with a right-to-left override",
			plan: vtPlan(vtTask("report\u202etxt.exe")),
			want: []vtProblem{{plan.CodeInvalidID, "report\u202etxt.exe", "id", `id "report\u202etxt.exe" holds bidirectional, zero-width or other invisible formatting characters; use letters, digits, _ and -`}},
		},
		{
			name: "id with a zero-width space",
			plan: vtPlan(vtTask("fetch\u200b"), vtTask("fetch")),
			want: []vtProblem{{plan.CodeInvalidID, "fetch\u200b", "id", `id "fetch\u200b" holds bidirectional, zero-width or other invisible formatting characters; use letters, digits, _ and -`}},
		},
		{
			name: "id with a line separator",
			plan: vtPlan(vtTask("a\u2028b")),
			want: []vtProblem{{plan.CodeInvalidID, "a\u2028b", "id", `id "a\u2028b" holds bidirectional, zero-width or other invisible formatting characters; use letters, digits, _ and -`}},
		},
		{
			name: "id not UTF-8",
			plan: vtPlan(vtTask("a\xffb")),
			want: []vtProblem{{plan.CodeInvalidID, "a\xffb", "id", `id "a\xffb" is not valid UTF-8`}},
		},
		{
			name: "id at the length limit",
			plan: vtPlan(vtTask(strings.Repeat("é", 64))),
		},
		{
			name: "id over the length limit",
			plan: vtPlan(vtTask(strings.Repeat("a", 129))),
			want: []vtProblem{{plan.CodeInvalidID, strings.Repeat("a", 129), "id", "id is 129 bytes, over the limit of 128"}},
		},
		{
			name: "id over a set length limit",
			plan: vtPlan(vtTask("abcd")),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxIDBytes: 3})},
			want: []vtProblem{{plan.CodeInvalidID, "abcd", "id", "id is 4 bytes, over the limit of 3"}},
		},
		{
			name: "id length without a limit",
			plan: vtPlan(vtTask(strings.Repeat("a", 1000))),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxIDBytes: -1})},
		},
		{
			name: "ids of other scripts",
			plan: vtPlan(vtTask("récupérer_数据-1"), vtTask("تحقق", "récupérer_数据-1")),
		},

		// duplicate_id
		{
			name: "duplicate id",
			plan: vtPlan(vtTask("a"), vtTask("b"), vtTask("a")),
			want: []vtProblem{{plan.CodeDuplicateID, "a", "id", `id "a" is also the id of task 1; ids must be unique`}},
		},
		{
			name: "id used three times",
			plan: vtPlan(vtTask("a"), vtTask("a"), vtTask("a")),
			want: []vtProblem{
				{plan.CodeDuplicateID, "a", "id", `id "a" is also the id of task 1; ids must be unique`},
				{plan.CodeDuplicateID, "a", "id", `id "a" is also the id of task 1; ids must be unique`},
			},
		},

		// missing_dependency
		{
			name: "missing dependency",
			plan: vtPlan(vtTask("a"), vtTask("b", "nope")),
			want: []vtProblem{{plan.CodeMissingDependency, "b", "depends_on", `depends on "nope", which is not a task of the plan`}},
		},
		{
			name: "missing dependency with a suggestion",
			plan: vtPlan(vtTask("fetch_data"), vtTask("b", "Fetch Data")),
			want: []vtProblem{{plan.CodeMissingDependency, "b", "depends_on",
				`depends on "Fetch Data", which is not a task of the plan; did you mean "fetch_data"?`}},
		},
		{
			name: "suggestion ignores case and dashes",
			plan: vtPlan(vtTask("Write-Report"), vtTask("b", "write_report")),
			want: []vtProblem{{plan.CodeMissingDependency, "b", "depends_on",
				`depends on "write_report", which is not a task of the plan; did you mean "Write-Report"?`}},
		},
		{
			name: "several missing dependencies",
			plan: vtPlan(vtTask("a", "x", "y")),
			want: []vtProblem{
				{plan.CodeMissingDependency, "a", "depends_on", `depends on "x", which is not a task of the plan`},
				{plan.CodeMissingDependency, "a", "depends_on", `depends on "y", which is not a task of the plan`},
			},
		},

		// self_dependency
		{
			name: "self dependency",
			plan: vtPlan(vtTask("a", "a")),
			want: []vtProblem{{plan.CodeSelfDependency, "a", "depends_on", `the task depends on itself ("a")`}},
		},

		// cycle
		{
			name: "2-cycle",
			plan: vtPlan(vtTask("a", "b"), vtTask("b", "a")),
			want: []vtProblem{{plan.CodeCycle, "a", "depends_on", "dependency cycle: a -> b -> a"}},
		},
		{
			name: "3-cycle",
			plan: vtPlan(vtTask("a", "c"), vtTask("b", "a"), vtTask("c", "b")),
			want: []vtProblem{{plan.CodeCycle, "a", "depends_on", "dependency cycle: a -> c -> b -> a"}},
		},
		{
			name: "3-cycle reported at its first task in source order",
			plan: vtPlan(vtTask("start"), vtTask("x", "z", "start"), vtTask("y", "x"), vtTask("z", "y")),
			want: []vtProblem{{plan.CodeCycle, "x", "depends_on", "dependency cycle: x -> z -> y -> x"}},
		},
		{
			name: "the shortest way back",
			plan: vtPlan(vtTask("a", "b", "c"), vtTask("b", "c"), vtTask("c", "a")),
			want: []vtProblem{{plan.CodeCycle, "a", "depends_on", "dependency cycle: a -> c -> a"}},
		},
		{
			name: "two cycles",
			plan: vtPlan(vtTask("a", "b"), vtTask("b", "a"), vtTask("ok", "a"), vtTask("x", "y"), vtTask("y", "x")),
			want: []vtProblem{
				{plan.CodeCycle, "a", "depends_on", "dependency cycle: a -> b -> a"},
				{plan.CodeCycle, "x", "depends_on", "dependency cycle: x -> y -> x"},
			},
		},

		// unknown_agent
		{
			name: "unknown agent",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Agent = "writer" })),
			want: []vtProblem{{plan.CodeUnknownAgent, "a", "agent", `agent "writer" is not defined in the plan's agents and is not a registry worker`}},
		},
		{
			name: "agent defined in the plan",
			plan: &plan.Plan{
				Agents: map[string]plan.Agent{"writer": {Prompt: "You write."}},
				Tasks:  []plan.Task{vtWith(vtTask("a"), func(t *plan.Task) { t.Agent = "writer" })},
			},
		},
		{
			name: "registry worker",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Agent = "writer" })),
			opts: []plan.Option{plan.WithWorkers("coder", "writer")},
		},
		{
			name: "WithWorkers given twice adds up",
			plan: vtPlan(
				vtWith(vtTask("a"), func(t *plan.Task) { t.Agent = "writer" }),
				vtWith(vtTask("b"), func(t *plan.Task) { t.Agent = "coder" })),
			opts: []plan.Option{plan.WithWorkers("writer"), plan.WithWorkers("coder")},
		},
		{
			name: "another worker does not help",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Agent = "writer" })),
			opts: []plan.Option{plan.WithWorkers("coder")},
			want: []vtProblem{{plan.CodeUnknownAgent, "a", "agent", `agent "writer" is not defined in the plan's agents and is not a registry worker`}},
		},
		{
			name: "the default agent needs no definition",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Agent = plan.DefaultAgent })),
		},
		{
			name: "no agent",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Agent = "" })),
			want: []vtProblem{{plan.CodeUnknownAgent, "a", "agent", `the task names no agent; use "default" or an agent of the plan`}},
		},

		// agent_is_worker
		{
			name: "a plan agent with a worker's name",
			plan: &plan.Plan{
				Agents: map[string]plan.Agent{"writer": {Prompt: "You write."}, "coder": {Prompt: "You code."}},
				Tasks:  []plan.Task{vtWith(vtTask("a"), func(t *plan.Task) { t.Agent = "writer" })},
			},
			opts: []plan.Option{plan.WithWorkers("writer", "coder")},
			want: []vtProblem{
				{plan.CodeAgentIsWorker, "", "agents.coder", `agent "coder" is defined by the plan and is also a registry worker; rename the plan's agent`},
				{plan.CodeAgentIsWorker, "", "agents.writer", `agent "writer" is defined by the plan and is also a registry worker; rename the plan's agent`},
			},
		},

		// undeclared_slot
		{
			name: "a declared slot, a path under it and the whole output",
			plan: vtPlan(
				vtWith(vtTask("fetch"), func(t *plan.Task) { t.Agent = "search" }),
				vtWith(vtTask("use", "fetch"), func(t *plan.Task) {
					t.Inputs = map[string]plan.InputRef{
						"q":   {From: "fetch", Slot: "query"},
						"top": {From: "fetch", Slot: "items.0.title"},
						"all": {From: "fetch"},
					}
				})),
			opts: []plan.Option{plan.WithWorkerOutputs("search", "query", "items")},
		},
		{
			name: "a slot the worker does not declare",
			plan: vtPlan(
				vtWith(vtTask("fetch"), func(t *plan.Task) { t.Agent = "search" }),
				vtWith(vtTask("use", "fetch"), func(t *plan.Task) {
					t.Inputs = map[string]plan.InputRef{"n": {From: "fetch", Slot: "count.total"}, "q": {From: "fetch", Slot: "query"}}
				})),
			opts: []plan.Option{plan.WithWorkerOutputs("search", "query", "items")},
			want: []vtProblem{{plan.CodeUndeclaredSlot, "use", "inputs.n", `input "n" reads slot "count" of "fetch", but worker "search" declares query, items`}},
		},
		{
			name: "a worker that declares no slots",
			plan: vtPlan(
				vtWith(vtTask("fetch"), func(t *plan.Task) { t.Agent = "search" }),
				vtWith(vtTask("use", "fetch"), func(t *plan.Task) {
					t.Inputs = map[string]plan.InputRef{"q": {From: "fetch", Slot: "query"}}
				})),
			opts: []plan.Option{plan.WithWorkerOutputs("search")},
			want: []vtProblem{{plan.CodeUndeclaredSlot, "use", "inputs.q", `input "q" reads slot "query" of "fetch", but worker "search" declares no output slots`}},
		},
		{
			name: "workers named without outputs and plan agents are not checked",
			plan: &plan.Plan{
				Agents: map[string]plan.Agent{"writer": {Prompt: "You write."}},
				Tasks: []plan.Task{
					vtWith(vtTask("fetch"), func(t *plan.Task) { t.Agent = "search" }),
					vtWith(vtTask("draft"), func(t *plan.Task) { t.Agent = "writer" }),
					vtWith(vtTask("use", "fetch", "draft"), func(t *plan.Task) {
						t.Inputs = map[string]plan.InputRef{"q": {From: "fetch", Slot: "anything"}, "d": {From: "draft", Slot: "body"}}
					}),
				},
			},
			opts: []plan.Option{plan.WithWorkers("search")},
		},

		// input_not_upstream
		{
			name: "input from a direct dependency",
			plan: vtPlan(vtTask("a"), vtWith(vtTask("b", "a"), func(t *plan.Task) {
				t.Inputs = map[string]plan.InputRef{"q": {From: "a", Slot: "items"}}
			})),
		},
		{
			name: "input from a transitive dependency",
			plan: vtPlan(vtTask("a"), vtTask("b", "a"), vtWith(vtTask("c", "b"), func(t *plan.Task) {
				t.Inputs = map[string]plan.InputRef{"q": {From: "a"}}
			})),
		},
		{
			name: "input from a task that is not upstream",
			plan: vtPlan(vtTask("a"), vtWith(vtTask("b"), func(t *plan.Task) {
				t.Inputs = map[string]plan.InputRef{"q": {From: "a", Slot: "items"}}
			})),
			want: []vtProblem{{plan.CodeInputNotUpstream, "b", "inputs.q", `input "q" names "a", which is not upstream; add "a" to depends_on`}},
		},
		{
			name: "input from a downstream task",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) {
				t.Inputs = map[string]plan.InputRef{"q": {From: "b"}}
			}), vtTask("b", "a")),
			want: []vtProblem{{plan.CodeInputNotUpstream, "a", "inputs.q", `input "q" names "b", which is not upstream; add "b" to depends_on`}},
		},
		{
			name: "input from a missing task",
			plan: vtPlan(vtTask("fetch_data"), vtWith(vtTask("b", "fetch_data"), func(t *plan.Task) {
				t.Inputs = map[string]plan.InputRef{"q": {From: "fetch-data"}}
			})),
			want: []vtProblem{{plan.CodeInputNotUpstream, "b", "inputs.q",
				`input "q" names "fetch-data", which is not a task of the plan; did you mean "fetch_data"?`}},
		},
		{
			name: "input from the task itself",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) {
				t.Inputs = map[string]plan.InputRef{"q": {From: "a"}}
			})),
			want: []vtProblem{{plan.CodeInputNotUpstream, "a", "inputs.q", `input "q" names the task itself`}},
		},
		{
			name: "input from no task",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) {
				t.Inputs = map[string]plan.InputRef{"q": {Slot: "x"}}
			})),
			want: []vtProblem{{plan.CodeInputNotUpstream, "a", "inputs.q", `input "q" names no task`}},
		},
		{
			name: "inputs reported by slot name",
			plan: vtPlan(vtTask("a"), vtWith(vtTask("b"), func(t *plan.Task) {
				t.Inputs = map[string]plan.InputRef{"zeta": {From: "a"}, "alpha": {From: "a"}, "mid": {From: "a"}}
			})),
			want: []vtProblem{
				{plan.CodeInputNotUpstream, "b", "inputs.alpha", `input "alpha" names "a", which is not upstream; add "a" to depends_on`},
				{plan.CodeInputNotUpstream, "b", "inputs.mid", `input "mid" names "a", which is not upstream; add "a" to depends_on`},
				{plan.CodeInputNotUpstream, "b", "inputs.zeta", `input "zeta" names "a", which is not upstream; add "a" to depends_on`},
			},
		},

		// template_not_upstream
		{
			name: "template naming a direct dependency",
			plan: vtPlan(vtTask("a"), vtWith(vtTask("b", "a"), func(t *plan.Task) { t.Input = "Summarize {{results.a}}" })),
		},
		{
			name: "template with a path into a transitive dependency",
			plan: vtPlan(vtTask("a"), vtTask("b", "a"), vtWith(vtTask("c", "b"), func(t *plan.Task) {
				t.Input = "Compare {{results.a.items}} with {{ results.b.summary.text }}"
			})),
		},
		{
			name: "template naming a missing task",
			plan: vtPlan(vtTask("a"), vtWith(vtTask("b", "a"), func(t *plan.Task) { t.Input = "Use {{results.nope.x}}" })),
			want: []vtProblem{{plan.CodeTemplateNotUpstream, "b", "input", `template {{results.nope.x}} names "nope", which is not a task of the plan`}},
		},
		{
			name: "template naming a task that is not upstream",
			plan: vtPlan(vtTask("a"), vtWith(vtTask("b"), func(t *plan.Task) { t.Input = "Use {{results.a}}" })),
			want: []vtProblem{{plan.CodeTemplateNotUpstream, "b", "input", `template {{results.a}} names "a", which is not upstream; add "a" to depends_on`}},
		},
		{
			name: "template naming the task itself",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Input = "Improve {{results.a}}" })),
			want: []vtProblem{{plan.CodeTemplateNotUpstream, "a", "input", `template {{results.a}} names the task itself`}},
		},
		{
			name: "template naming no task",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Input = "Use {{ results }}" })),
			want: []vtProblem{{plan.CodeTemplateNotUpstream, "a", "input", `template {{ results }} names no task`}},
		},
		{
			name: "template naming a sibling",
			plan: vtPlan(vtTask("root"), vtTask("a", "root"), vtWith(vtTask("b", "root"), func(t *plan.Task) { t.Input = "Use {{results.a}}" })),
			want: []vtProblem{{plan.CodeTemplateNotUpstream, "b", "input", `template {{results.a}} names "a", which is not upstream; add "a" to depends_on`}},
		},
		{
			name: "templates with dotted ids",
			plan: vtPlan(vtTask("1"), vtTask("1.2", "1"), vtWith(vtTask("2", "1.2"), func(t *plan.Task) {
				t.Input = "Use {{results.1.2}}, {{results.1.2.text}} and {{results.1.summary}}"
			})),
		},
		{
			name: "dotted id that is not upstream",
			plan: vtPlan(vtTask("1.1"), vtTask("1.2"), vtWith(vtTask("2", "1.1"), func(t *plan.Task) {
				t.Input = "Use {{results.1.2.text}}"
			})),
			want: []vtProblem{{plan.CodeTemplateNotUpstream, "2", "input", `template {{results.1.2.text}} names "1.2", which is not upstream; add "1.2" to depends_on`}},
		},
		{
			name: "other templates are left alone",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) {
				t.Input = "Use {{input}}, {{resultsx}}, {{ result.a }}, {x} and {{unclosed"
			})),
		},
		{
			name: "every template of an input",
			plan: vtPlan(vtTask("a"), vtWith(vtTask("b"), func(t *plan.Task) { t.Input = "{{results.a}} {{results.c}} {{results.a}}" })),
			want: []vtProblem{
				{plan.CodeTemplateNotUpstream, "b", "input", `template {{results.a}} names "a", which is not upstream; add "a" to depends_on`},
				{plan.CodeTemplateNotUpstream, "b", "input", `template {{results.c}} names "c", which is not a task of the plan`},
				{plan.CodeTemplateNotUpstream, "b", "input", `template {{results.a}} names "a", which is not upstream; add "a" to depends_on`},
			},
		},

		// limits
		{
			name: "too many tasks",
			plan: vtPlan(vtTask("a"), vtTask("b"), vtTask("c")),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxTasks: 2})},
			want: []vtProblem{{plan.CodeTooManyTasks, "", "tasks", "the plan has 3 tasks, over the limit of 2"}},
		},
		{
			name: "tasks at the limit",
			plan: vtPlan(vtTask("a"), vtTask("b")),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxTasks: 2})},
		},
		{
			name: "no task limit",
			plan: vtPlan(vtTask("a"), vtTask("b"), vtTask("c")),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxTasks: -1})},
		},
		{
			name: "input too large",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Input = "123456" }), vtWith(vtTask("b"), func(t *plan.Task) { t.Input = "12345" })),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxInputBytes: 5})},
			want: []vtProblem{{plan.CodeInputTooLarge, "a", "input", "input is 6 bytes, over the limit of 5"}},
		},
		{
			name: "input limit counts bytes",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Input = "ééé" })),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxInputBytes: 5})},
			want: []vtProblem{{plan.CodeInputTooLarge, "a", "input", "input is 6 bytes, over the limit of 5"}},
		},
		{
			name: "input at the default limit",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Input = strings.Repeat("x", 1<<20) })),
		},
		{
			name: "input over the default limit",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Input = strings.Repeat("x", 1<<20+1) })),
			want: []vtProblem{{plan.CodeInputTooLarge, "a", "input", "input is 1048577 bytes, over the limit of 1048576"}},
		},
		{
			name: "output_schema too large",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`{"type":"object"}`) }),
				vtWith(vtTask("b"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`{"type":"array"}`) })),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxInputBytes: 16})},
			want: []vtProblem{{plan.CodeInputTooLarge, "a", "output_schema", "output_schema is 17 bytes, over the limit of 16"}},
		},
		{
			name: "input and output_schema are bounded separately",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Input, t.OutputSchema = "123456", json.RawMessage(`{"type":"object"}`) })),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxInputBytes: 5})},
			want: []vtProblem{
				{plan.CodeInputTooLarge, "a", "input", "input is 6 bytes, over the limit of 5"},
				{plan.CodeInputTooLarge, "a", "output_schema", "output_schema is 17 bytes, over the limit of 5"},
			},
		},
		{
			name: "output_schema without a limit",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) {
				t.OutputSchema = json.RawMessage(`{"description":"` + strings.Repeat("x", 1<<20) + `"}`)
			})),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxInputBytes: -1})},
		},
		{
			name: "output_schema over the default limit",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) {
				t.OutputSchema = json.RawMessage(`{"description":"` + strings.Repeat("x", 1<<20) + `"}`)
			})),
			want: []vtProblem{{plan.CodeInputTooLarge, "a", "output_schema", "output_schema is 1048594 bytes, over the limit of 1048576"}},
		},
		{
			name: "output_schema built in Go",
			plan: vtPlan(
				vtWith(vtTask("indented"), func(t *plan.Task) { t.OutputSchema = json.RawMessage("\n{\n  \"type\": \"object\"\n}\n") }),
				vtWith(vtTask("empty"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`{}`) }),
				vtWith(vtTask("absent"), func(t *plan.Task) { t.OutputSchema = json.RawMessage{} }),
			),
		},
		{
			name: "output_schema that is no JSON object",
			plan: vtPlan(
				vtWith(vtTask("array"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`[{"type":"object"}]`) }),
				vtWith(vtTask("null"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`null`) }),
				vtWith(vtTask("string"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`"object"`) }),
				vtWith(vtTask("truncated"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`{"type":`) }),
				vtWith(vtTask("trailing_comma"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`{"type":"object",}`) }),
				vtWith(vtTask("two_values"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`{} {}`) }),
				vtWith(vtTask("duplicate_key"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`{"type":"object","type":"array"}`) }),
				vtWith(vtTask("bad_utf8"), func(t *plan.Task) { t.OutputSchema = json.RawMessage("{\"description\":\"\xff\"}") }),
			),
			want: []vtProblem{
				{plan.CodeInvalidField, "array", "output_schema", "output_schema must be a JSON Schema object, found an array"},
				{plan.CodeInvalidField, "null", "output_schema", "output_schema must be a JSON Schema object, found null"},
				{plan.CodeInvalidField, "string", "output_schema", "output_schema must be a JSON Schema object, found a string"},
				{plan.CodeInvalidField, "truncated", "output_schema", "output_schema is not valid JSON"},
				{plan.CodeInvalidField, "trailing_comma", "output_schema", "output_schema is not valid JSON"},
				{plan.CodeInvalidField, "two_values", "output_schema", "output_schema is not valid JSON"},
				{plan.CodeInvalidField, "duplicate_key", "output_schema", `output_schema is not valid JSON: duplicate object member name "type"`},
				{plan.CodeInvalidField, "bad_utf8", "output_schema", "output_schema is not valid JSON: invalid UTF-8 in string"},
			},
		},
		{
			name: "output_schema that does not compile",
			plan: vtPlan(
				vtWith(vtTask("bad_type"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`{"type":"objekt"}`) }),
				vtWith(vtTask("remote_ref"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`{"$ref":"https://example.com/s.json"}`) }),
				vtWith(vtTask("bad_pattern"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`{"type":"string","pattern":"("}`) }),
				vtWith(vtTask("fine"), func(t *plan.Task) {
					t.OutputSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
				}),
			),
			want: []vtProblem{
				{plan.CodeInvalidField, "bad_type", "output_schema", "output_schema does not compile: at /type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'; at /type: got string, want array"},
				{plan.CodeInvalidField, "remote_ref", "output_schema", `output_schema does not compile: failing loading "https://example.com/s.json": https://example.com/s.json is outside the schema; a schema may not refer to other documents`},
				{plan.CodeInvalidField, "bad_pattern", "output_schema", "output_schema does not compile: at /pattern: '(' is not valid regex: error parsing regexp: missing closing ): `(`"},
			},
		},
		{
			name: "an output_schema over the limit is not compiled",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.OutputSchema = json.RawMessage(`{"type":"objekt"}`) })),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxInputBytes: 16})},
			want: []vtProblem{{plan.CodeInputTooLarge, "a", "output_schema", "output_schema is 17 bytes, over the limit of 16"}},
		},
		{
			name: "too many retries",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.MaxRetries = 4 }), vtWith(vtTask("b"), func(t *plan.Task) { t.MaxRetries = 3 })),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxRetries: 3})},
			want: []vtProblem{{plan.CodeTooManyRetries, "a", "max_retries", "max_retries is 4, over the limit of 3"}},
		},
		{
			name: "retries at the default limit",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.MaxRetries = 100 })),
		},
		{
			name: "retries over the default limit",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.MaxRetries = 101 })),
			want: []vtProblem{{plan.CodeTooManyRetries, "a", "max_retries", "max_retries is 101, over the limit of 100"}},
		},
		{
			name: "WithLimits keeps the other defaults",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.MaxRetries = 101 })),
			opts: []plan.Option{plan.WithLimits(plan.Limits{MaxTasks: 5})},
			want: []vtProblem{{plan.CodeTooManyRetries, "a", "max_retries", "max_retries is 101, over the limit of 100"}},
		},

		// enums and ranges of plans built in Go
		{
			name: "unknown type",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Type = "gate" })),
			want: []vtProblem{{plan.CodeInvalidType, "a", "type", `unknown task type "gate"; use task, synthesis_gate or human_review`}},
		},
		{
			name: "unknown on_failure",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.OnFailure = "explode" })),
			want: []vtProblem{{plan.CodeInvalidOnFailure, "a", "on_failure", `unknown policy "explode"; use stop, skip, retry or replan`}},
		},
		{
			name: "unknown on_verification_failure",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.OnVerificationFailure = "Retry" })),
			want: []vtProblem{{plan.CodeInvalidOnVerificationFailure, "a", "on_verification_failure", `unknown policy "Retry"; use stop, skip, retry or replan`}},
		},
		{
			name: "negative max_retries",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.MaxRetries = -1 })),
			want: []vtProblem{{plan.CodeInvalidMaxRetries, "a", "max_retries", "max_retries must be a non-negative integer, found -1"}},
		},
		{
			name: "negative timeout",
			plan: vtPlan(vtWith(vtTask("a"), func(t *plan.Task) { t.Timeout = -5 * time.Second })),
			want: []vtProblem{{plan.CodeInvalidTimeout, "a", "timeout", "timeout -5s is negative"}},
		},
		{
			name: "every valid type and policy",
			plan: vtPlan(
				vtWith(vtTask("a"), func(t *plan.Task) {
					t.Type, t.OnFailure, t.OnVerificationFailure = plan.TypeTask, plan.PolicyStop, plan.PolicySkip
				}),
				vtWith(vtTask("b"), func(t *plan.Task) {
					t.Type, t.OnFailure, t.OnVerificationFailure = plan.TypeSynthesisGate, plan.PolicySkip, plan.PolicyReplan
				}),
				vtWith(vtTask("c"), func(t *plan.Task) {
					t.Type, t.OnFailure, t.OnVerificationFailure = plan.TypeHumanReview, plan.PolicyRetry, plan.PolicyStop
				}),
				vtWith(vtTask("d"), func(t *plan.Task) { t.OnFailure, t.MaxRetries, t.Timeout = plan.PolicyReplan, 0, time.Minute }),
			),
		},
		{
			name: "a zero Task is not a valid task",
			plan: vtPlan(plan.Task{ID: "a"}),
			want: []vtProblem{
				{plan.CodeUnknownAgent, "a", "agent", `the task names no agent; use "default" or an agent of the plan`},
				{plan.CodeInvalidType, "a", "type", `unknown task type ""; use task, synthesis_gate or human_review`},
				{plan.CodeInvalidOnFailure, "a", "on_failure", `unknown policy ""; use stop, skip, retry or replan`},
				{plan.CodeInvalidOnVerificationFailure, "a", "on_verification_failure", `unknown policy ""; use stop, skip, retry or replan`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.plan.Validate(tt.opts...)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, plan.ErrInvalid)
			assert.Equal(t, tt.want, vtProblems(err))
		})
	}
}

func TestValidateDefaultMaxTasks(t *testing.T) {
	assert.Equal(t, plan.Limits{MaxPlanBytes: 64 << 20, MaxTasks: 10_000, MaxInputBytes: 1 << 20, MaxRetries: 100, MaxIDBytes: 128}, plan.DefaultLimits())
	tasks := make([]plan.Task, 10_001)
	for i := range tasks {
		tasks[i] = plan.NewTask("t"+strconv.Itoa(i), "x")
	}
	require.NoError(t, vtPlan(tasks[:10_000]...).Validate(), "10,000 tasks are allowed")
	err := vtPlan(tasks...).Validate()
	assert.Equal(t, []vtProblem{{plan.CodeTooManyTasks, "", "tasks", "the plan has 10001 tasks, over the limit of 10000"}}, vtProblems(err))
}

func TestValidateParsedPlan(t *testing.T) {
	src := `Here you go:
` + "```json" + `
{
  "agents": {"researcher": "You research."},
  "steps": [
    {"step_id": 1, "worker": "researcher", "query": "Find X"},
    {"step_id": 2, "assigned_to": "writer", "action": "Summarize {{results.1.items}}", "requires": 1},
    {"step_id": 3, "requires": [2, 4], "action": "Check"},
    {"step_id": 2, "action": "Again"}
  ]
}
` + "```"
	p := ptMustParse(t, src)
	err := p.Validate()
	ps := plan.Problems(err)
	require.Len(t, ps, 3, "%v", err)

	assert.Equal(t, plan.CodeUnknownAgent, ps[0].Code)
	assert.Equal(t, "2", ps[0].TaskID)
	assert.Equal(t, ptPos(t, src, `{"step_id": 2, "assigned_to"`), ps[0].Pos, "a Validate problem points at its task")

	assert.Equal(t, plan.CodeMissingDependency, ps[1].Code)
	assert.Equal(t, "3", ps[1].TaskID)
	assert.Equal(t, `depends on "4", which is not a task of the plan`, ps[1].Message)
	assert.Equal(t, ptPos(t, src, `{"step_id": 3`), ps[1].Pos)

	assert.Equal(t, plan.CodeDuplicateID, ps[2].Code)
	assert.Equal(t, "2", ps[2].TaskID)
	assert.Equal(t, `id "2" is also the id of task 2 at line 7; ids must be unique`, ps[2].Message, "the message says where the first task is")
	assert.Equal(t, ptPos(t, src, `{"step_id": 2, "action"`), ps[2].Pos)

	assert.Equal(t, []plan.Code{plan.CodeMissingDependency, plan.CodeDuplicateID}, ptCodes(p.Validate(plan.WithWorkers("writer"))),
		"a registry worker is a known agent")
}

func TestValidateReportsEveryProblemInTaskOrder(t *testing.T) {
	p := &plan.Plan{
		Agents: map[string]plan.Agent{"writer": {Prompt: "You write."}},
		Tasks: []plan.Task{
			vtWith(vtTask("fetch"), func(t *plan.Task) { t.Agent = "scraper" }),       // unknown_agent
			vtTask("write", "fetch", "outline"),                                       // missing_dependency
			vtWith(vtTask("check", "write"), func(t *plan.Task) { t.Type = "audit" }), // invalid_type
			vtTask("fetch"), // duplicate_id
			vtWith(vtTask("ship", "check"), func(t *plan.Task) { t.Input = "Ship {{results.draft}}" }), // template_not_upstream
		},
	}
	err := p.Validate()
	require.Error(t, err)
	assert.Equal(t, []vtProblem{
		{plan.CodeUnknownAgent, "fetch", "agent", `agent "scraper" is not defined in the plan's agents and is not a registry worker`},
		{plan.CodeMissingDependency, "write", "depends_on", `depends on "outline", which is not a task of the plan`},
		{plan.CodeInvalidType, "check", "type", `unknown task type "audit"; use task, synthesis_gate or human_review`},
		{plan.CodeDuplicateID, "fetch", "id", `id "fetch" is also the id of task 1; ids must be unique`},
		{plan.CodeTemplateNotUpstream, "ship", "input", `template {{results.draft}} names "draft", which is not a task of the plan`},
	}, vtProblems(err))

	t.Run("plan problems first, then each task's problems together", func(t *testing.T) {
		p := vtPlan(
			vtWith(vtTask("a", "b", "a"), func(t *plan.Task) { t.Agent, t.Input = "ghost", "{{results.zz}}" }),
			vtTask("b", "a"),
			vtWith(vtTask("c"), func(t *plan.Task) { t.OnFailure = "never" }),
		)
		err := p.Validate(plan.WithLimits(plan.Limits{MaxTasks: 1}))
		got := vtProblems(err)
		var codes []plan.Code
		var ids []string
		for _, pr := range got {
			codes = append(codes, pr.Code)
			ids = append(ids, pr.TaskID)
		}
		assert.Equal(t, []plan.Code{
			plan.CodeTooManyTasks,
			plan.CodeSelfDependency, plan.CodeCycle, plan.CodeUnknownAgent, plan.CodeTemplateNotUpstream,
			plan.CodeInvalidOnFailure,
		}, codes)
		assert.Equal(t, []string{"", "a", "a", "a", "a", "c"}, ids)
	})
}

func TestValidateCycleIsDeterministic(t *testing.T) {
	build := func() *plan.Plan {
		return vtPlan(
			vtTask("intro", "outro"),
			vtTask("a", "c", "intro"),
			vtTask("b", "a"),
			vtTask("c", "b", "d"),
			vtTask("d", "a"),
			vtTask("x", "y"),
			vtTask("y", "x"),
			vtTask("outro", "intro"),
		)
	}
	first := build().Validate()
	require.Error(t, first)
	assert.Equal(t, "task intro: depends_on: dependency cycle: intro -> outro -> intro [cycle]\n"+
		"task a: depends_on: dependency cycle: a -> c -> b -> a [cycle]\n"+
		"task x: depends_on: dependency cycle: x -> y -> x [cycle]", first.Error())
	for i := 0; i < 20; i++ {
		assert.Equal(t, first.Error(), build().Validate().Error(), "run %d", i)
		_, err := build().DAG()
		assert.Equal(t, first.Error(), err.Error(), "DAG run %d", i)
	}
}

func TestValidateLongCycle(t *testing.T) {
	const n = 10_000
	tasks := make([]plan.Task, n)
	for i := range tasks {
		tasks[i] = vtTask("t"+strconv.Itoa(i), "t"+strconv.Itoa((i+1)%n))
	}
	err := vtPlan(tasks...).Validate()
	ps := plan.Problems(err)
	require.Len(t, ps, 1)
	assert.Equal(t, plan.CodeCycle, ps[0].Code)
	assert.Equal(t, "t0", ps[0].TaskID)
	assert.True(t, strings.HasPrefix(ps[0].Message, "dependency cycle: t0 -> t1 -> t2 -> "), ps[0].Message[:60])
	assert.True(t, strings.HasSuffix(ps[0].Message, " -> t9998 -> t9999 -> t0"))
	assert.Equal(t, n+1, strings.Count(ps[0].Message, " -> ")+1)
}

func TestValidateErrors(t *testing.T) {
	p := vtPlan(vtTask("a", "b"), vtTask("b", "a"), vtTask("c", "nope"))
	err := p.Validate()
	require.Error(t, err)

	t.Run("errors.Is ErrInvalid", func(t *testing.T) {
		assert.True(t, errors.Is(err, plan.ErrInvalid))
		wrapped := fmt.Errorf("load plan.json: %w", err)
		assert.True(t, errors.Is(wrapped, plan.ErrInvalid))
		assert.True(t, errors.Is(&plan.Error{}, plan.ErrInvalid), "even with no problem")
		assert.True(t, errors.Is(&plan.Problem{Code: plan.CodeCycle}, plan.ErrInvalid))
		assert.False(t, errors.Is(errors.New("other"), plan.ErrInvalid))
	})
	t.Run("errors.As *Error", func(t *testing.T) {
		var e *plan.Error
		require.True(t, errors.As(fmt.Errorf("wrapped: %w", err), &e))
		require.Len(t, e.Problems, 2)
		assert.True(t, e.Has(plan.CodeCycle))
		assert.True(t, e.Has(plan.CodeMissingDependency))
		assert.False(t, e.Has(plan.CodeEmptyPlan))
	})
	t.Run("errors.As *Problem", func(t *testing.T) {
		var pr *plan.Problem
		require.True(t, errors.As(err, &pr))
		assert.Equal(t, plan.CodeCycle, pr.Code)
		assert.Equal(t, "a", pr.TaskID)
	})
	t.Run("unwraps like errors.Join", func(t *testing.T) {
		u, ok := err.(interface{ Unwrap() []error })
		require.True(t, ok)
		errs := u.Unwrap()
		require.Len(t, errs, 2)
		ps := plan.Problems(err)
		for i, e := range errs {
			assert.Same(t, ps[i], e)
			assert.True(t, errors.Is(err, e), "errors.Is finds problem %d", i)
		}
		joined := errors.Join(errs...)
		assert.Equal(t, joined.Error(), err.Error(), "the text is that of errors.Join")
	})
	t.Run("Problems", func(t *testing.T) {
		ps := plan.Problems(fmt.Errorf("wrapped: %w", err))
		require.Len(t, ps, 2)
		assert.Equal(t, plan.CodeCycle, ps[0].Code)
		assert.Equal(t, plan.CodeMissingDependency, ps[1].Code)

		single := &plan.Problem{Code: plan.CodeEmptyPlan, Message: "m"}
		assert.Equal(t, []*plan.Problem{single}, plan.Problems(fmt.Errorf("x: %w", single)))
		assert.Nil(t, plan.Problems(nil))
		assert.Nil(t, plan.Problems(errors.New("other")))
	})
	t.Run("Error text", func(t *testing.T) {
		assert.Equal(t,
			"task a: depends_on: dependency cycle: a -> b -> a [cycle]\n"+
				`task c: depends_on: depends on "nope", which is not a task of the plan [missing_dependency]`,
			err.Error())
	})
	t.Run("a valid plan returns a nil error", func(t *testing.T) {
		err := vtPlan(vtTask("a")).Validate()
		assert.NoError(t, err)
		assert.True(t, err == nil, "a nil interface, not a typed nil")
	})
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		problem plan.Problem
		want    string
	}{
		{plan.Problem{Code: plan.CodeCycle, TaskID: "a", Field: "depends_on", Message: "dependency cycle: a -> b -> a"},
			"task a: depends_on: dependency cycle: a -> b -> a [cycle]"},
		{plan.Problem{Code: plan.CodeInvalidType, TaskID: "fetch", Field: "type", Message: `unknown task type "x"`, Pos: plan.Position{Line: 3, Column: 9}},
			`task fetch: type: unknown task type "x" [invalid_type]`},
		{plan.Problem{Code: plan.CodeEmptyPlan, Field: "tasks", Message: "the plan has no tasks"},
			"plan: tasks: the plan has no tasks [empty_plan]"},
		{plan.Problem{Code: plan.CodeNoJSON, Message: "no JSON object found"},
			"plan: no JSON object found [no_json]"},
		{plan.Problem{Code: plan.CodeUnknownAgent, TaskID: "b", Message: "m"},
			"task b: m [unknown_agent]"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.problem.Error())
			e := &plan.Error{Problems: []*plan.Problem{&tt.problem}}
			assert.Equal(t, tt.want, e.Error())
		})
	}
	assert.Equal(t, "", (&plan.Error{}).Error())
}

func TestValidateDoesNotChangeThePlan(t *testing.T) {
	p := vtPlan(vtTask("b", "a"), vtTask("a"), vtWith(vtTask("c", "b"), func(t *plan.Task) { t.Input = "{{results.a}}" }))
	before := fmt.Sprintf("%#v", p)
	require.NoError(t, p.Validate())
	assert.Equal(t, before, fmt.Sprintf("%#v", p))
}

func TestProblemJSON(t *testing.T) {
	err := ptMustParse(t, "{\"tasks\": [\n  {\"id\": \"a\", \"depends_on\": \"a\"}\n]}").Validate()
	ps := plan.Problems(err)
	require.Len(t, ps, 1)
	b, jerr := json.Marshal(ps[0])
	require.NoError(t, jerr)
	assert.JSONEq(t, `{"code": "self_dependency", "task_id": "a", "field": "depends_on",
		"message": "the task depends on itself (\"a\")", "pos": {"line": 2, "column": 3}}`, string(b))

	b, jerr = json.Marshal(&plan.Problem{Code: plan.CodeEmptyPlan, Message: "the plan has no tasks"})
	require.NoError(t, jerr)
	assert.JSONEq(t, `{"code": "empty_plan", "message": "the plan has no tasks", "pos": {"line": 0, "column": 0}}`, string(b))
}
