package critic_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/golden"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checksDir holds one directory per check: bad.json triggers the check,
// good.json is the fixed plan, bad.golden is the whole report of bad.json.
var checksDir = filepath.Join("testdata", "checks")

// criticChecks are the checks of package critic.
var criticChecks = []string{
	critic.CheckMissingGate,
	critic.CheckParallelExplosion,
	critic.CheckOptimismBias,
	critic.CheckOrphanTask,
	critic.CheckDisconnectedFlow,
	critic.CheckInvalidPredicate,
	critic.CheckPredicateNever,
	critic.CheckUnknownTool,
	critic.CheckUnknownWorker,
	critic.CheckRetryWithoutBudget,
	critic.CheckGateWithoutInputs,
	critic.CheckUnknownKey,
	critic.CheckNonblockingReview,
}

// planCodes are the problems of plan parsing and validation, which the
// critic reports as critical issues under their code.
var planCodes = []plan.Code{
	plan.CodeNoJSON,
	plan.CodeInvalidJSON,
	plan.CodePlanTooLarge,
	plan.CodeMissingTasks,
	plan.CodeInvalidField,
	plan.CodeInvalidType,
	plan.CodeInvalidOnFailure,
	plan.CodeInvalidOnVerificationFailure,
	plan.CodeInvalidMaxRetries,
	plan.CodeInvalidTimeout,
	plan.CodeEmptyPlan,
	plan.CodeInvalidID,
	plan.CodeDuplicateID,
	plan.CodeMissingDependency,
	plan.CodeSelfDependency,
	plan.CodeCycle,
	plan.CodeUnknownAgent,
	plan.CodeInputNotUpstream,
	plan.CodeTemplateNotUpstream,
	plan.CodeTooManyTasks,
	plan.CodeInputTooLarge,
	plan.CodeTooManyRetries,
	plan.CodeUndeclaredSlot,
	plan.CodeAgentIsWorker,
}

// hostRegistry is the host's registry of the tests: a scraper that declares
// its output slots.
func hostRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg := registry.New()
	noop := agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{}, nil })
	require.NoError(t, reg.Register("scraper", registry.Worker{Description: "Scrapes a web page", Outputs: []string{"items", "count"}, Agent: noop}))
	return reg
}

// options are the review options a check needs to fire at all.
func options(t testing.TB, check string) []critic.Option {
	switch check {
	case critic.CheckUnknownTool:
		return []critic.Option{critic.WithCatalog(toolCatalog{"arxiv", "search"})}
	case critic.CheckUnknownWorker, string(plan.CodeUndeclaredSlot), string(plan.CodeAgentIsWorker):
		return []critic.Option{critic.WithCatalog(hostRegistry(t))}
	case string(plan.CodePlanTooLarge):
		return []critic.Option{critic.WithLimits(plan.Limits{MaxPlanBytes: 64})}
	case string(plan.CodeTooManyTasks):
		return []critic.Option{critic.WithLimits(plan.Limits{MaxTasks: 2})}
	case string(plan.CodeInputTooLarge):
		return []critic.Option{critic.WithLimits(plan.Limits{MaxInputBytes: 40})}
	}
	return nil
}

// format writes a report as golden text: one line per issue, then the
// score, the summary and the recommendations.
func format(rep critic.Report) string {
	var b strings.Builder
	for _, is := range rep.Issues {
		task := "plan"
		if is.TaskID != "" {
			task = "task=" + is.TaskID
		}
		field := is.Field
		if field == "" {
			field = "-"
		}
		fmt.Fprintf(&b, "%s %s %s %s field=%s: %s\n", is.Pos, is.Severity, is.Check, task, field, is.Message)
	}
	fmt.Fprintf(&b, "score: %d\nsummary: %s\nrecommendations:\n", rep.Score, rep.Summary)
	for _, r := range rep.Recommendations {
		fmt.Fprintf(&b, "- %s\n", r)
	}
	return b.String()
}

// checksOf lists the checks of a report's issues.
func checksOf(rep critic.Report) []string {
	out := make([]string, len(rep.Issues))
	for i, is := range rep.Issues {
		out[i] = is.Check
	}
	return out
}

// issuesOf returns the issues of one check.
func issuesOf(rep critic.Report, check string) []critic.Issue {
	var out []critic.Issue
	for _, is := range rep.Issues {
		if is.Check == check {
			out = append(out, is)
		}
	}
	return out
}

func allChecks() []string {
	all := slices.Clone(criticChecks)
	for _, c := range planCodes {
		all = append(all, string(c))
	}
	return all
}

// TestGolden reviews bad.json and good.json of every check: bad triggers
// the check and its whole report matches bad.golden; good, the fixed plan,
// does not trigger it and has no critical issue.
func TestGolden(t *testing.T) {
	for _, check := range allChecks() {
		t.Run(check, func(t *testing.T) {
			dir := filepath.Join(checksDir, check)
			bad, err := os.ReadFile(filepath.Join(dir, "bad.json"))
			require.NoError(t, err)
			good, err := os.ReadFile(filepath.Join(dir, "good.json"))
			require.NoError(t, err)
			opts := options(t, check)

			rep := critic.ReviewSource(bad, opts...)
			golden.Check(t, filepath.Join(dir, "bad.golden"), []byte(format(rep)))
			found := issuesOf(rep, check)
			require.NotEmpty(t, found, "bad.json does not trigger %s:\n%s", check, format(rep))
			if !slices.Contains(criticChecks, check) {
				for _, is := range found {
					assert.Equal(t, critic.Critical, is.Severity, "a plan problem is critical: %v", is)
				}
			}
			for _, is := range rep.Issues {
				assert.NotEmpty(t, is.Message, "%v", is)
				assert.NotEmpty(t, is.Recommendation, "%v", is)
			}

			fixed := critic.ReviewSource(good, opts...)
			assert.Empty(t, issuesOf(fixed, check), "good.json still triggers %s:\n%s", check, format(fixed))
			assert.False(t, fixed.Has(critic.Critical), "good.json has critical issues:\n%s", format(fixed))
		})
	}
}

// TestGoldenCoversEveryCheck keeps testdata/checks and the lists of checks
// in step.
func TestGoldenCoversEveryCheck(t *testing.T) {
	entries, err := os.ReadDir(checksDir)
	require.NoError(t, err)
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	want := allChecks()
	slices.Sort(want)
	assert.Equal(t, want, dirs)
}

// TestCheckSeverities pins the severity of each check of the package.
func TestCheckSeverities(t *testing.T) {
	want := map[string]critic.Severity{
		critic.CheckMissingGate:        critic.Warning,
		critic.CheckParallelExplosion:  critic.Warning, // a heuristic: the plan runs
		critic.CheckOptimismBias:       critic.Warning,
		critic.CheckOrphanTask:         critic.Info,
		critic.CheckDisconnectedFlow:   critic.Warning, // bad.json uses none of its dependencies
		critic.CheckInvalidPredicate:   critic.Critical,
		critic.CheckPredicateNever:     critic.Warning,
		critic.CheckUnknownTool:        critic.Critical,
		critic.CheckUnknownWorker:      critic.Critical,
		critic.CheckRetryWithoutBudget: critic.Warning,
		critic.CheckGateWithoutInputs:  critic.Warning, // a heuristic: the gate runs
		critic.CheckUnknownKey:         critic.Warning,
		critic.CheckNonblockingReview:  critic.Warning,
	}
	require.Len(t, want, len(criticChecks))
	for _, check := range criticChecks {
		src, err := os.ReadFile(filepath.Join(checksDir, check, "bad.json"))
		require.NoError(t, err)
		for _, is := range issuesOf(critic.ReviewSource(src, options(t, check)...), check) {
			assert.Equal(t, want[check], is.Severity, "%v", is)
		}
	}
}

// ---- edge cases, built in Go ----

// tasks builds a plan of tasks made with plan.NewTask, each given as
// "id: input" with optional dependencies after "<-" ("b: use a <- a").
func tasks(specs ...string) *plan.Plan {
	p := &plan.Plan{}
	for _, s := range specs {
		head, deps, _ := strings.Cut(s, "<-")
		id, input, _ := strings.Cut(head, ":")
		t := plan.NewTask(strings.TrimSpace(id), strings.TrimSpace(input))
		t.DependsOn = strings.Fields(deps)
		if t.DependsOn == nil {
			t.DependsOn = []string{}
		}
		p.Tasks = append(p.Tasks, t)
	}
	return p
}

// gate turns the task id of p into a synthesis gate.
func gate(p *plan.Plan, id string) *plan.Plan {
	for i := range p.Tasks {
		if p.Tasks[i].ID == id {
			p.Tasks[i].Type = plan.TypeSynthesisGate
		}
	}
	return p
}

func TestOptimismBiasWords(t *testing.T) {
	for _, tc := range []struct {
		input string
		word  string // the flaky word found, "" for none
	}{
		{"Research the topic", ""},
		{"Researching is slow", ""},
		{"Search the web for hotels", "search"},
		{"Call the payment APIs", "apis"},
		{"Use the API of the bank", "api"},
		{"Send an HTTP request", "http"},
		{"Query the database", "query"},
		{"Ask the external service", "external"},
		{"Fetch the feed", "fetch"},
		{"Prefetch the assets", ""},
		{"Browse websites", ""},
		{"Run web_search", "web"},
		{"Summarise the notes", ""},
		{"", ""},
		// Operations named by two words: true positives.
		{"Look it up with a web search", "web"},
		{"Read the web page of the project", "web"},
		{"Send a request to the billing service", "request"},
		{"Make requests to the registry", "requests"},
		{"Issue GET requests for every id", "requests"},
		{"Queried the index for new entries", "queried"},
		{"Run remote queries against the archive", "queries"},
		{"Pull prices from external APIs", "external"},
		// The same words in other senses: false positives no more.
		{"Map the web of relationships between the characters", ""},
		{"Reply to the customer's polite request", ""},
		{"Triage each feature request", ""},
		{"Review the pull requests of the week", ""},
		{"Answer the user's query about pricing", ""},
		{"List the queries users asked most", ""},
		{"Weigh the external factors", ""},
		{"Discuss external validity", ""},
		{"Implement binary search over the sorted ids", ""},
		{"Rank the search results by relevance", ""},
		{"Spin a spider web poem", ""},
	} {
		t.Run(tc.input, func(t *testing.T) {
			found := issuesOf(critic.Review(tasks("t: "+tc.input)), critic.CheckOptimismBias)
			if tc.word == "" {
				assert.Empty(t, found)
				return
			}
			require.Len(t, found, 1)
			assert.Equal(t, critic.Warning, found[0].Severity)
			assert.Equal(t, "t", found[0].TaskID)
			assert.Equal(t, "on_failure", found[0].Field)
			assert.Contains(t, found[0].Message, fmt.Sprintf("%q", tc.word))
		})
	}
}

func TestOptimismBiasPolicies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*plan.Task)
		flag   bool
	}{
		{"critical stop (defaults)", func(*plan.Task) {}, true},
		{"non-critical", func(t *plan.Task) { t.Critical = false }, false},
		{"retrying", func(t *plan.Task) { t.OnFailure = plan.PolicyRetry }, false},
		{"skipping", func(t *plan.Task) { t.OnFailure = plan.PolicySkip }, false},
		{"replanning", func(t *plan.Task) { t.OnFailure = plan.PolicyReplan }, false},
		{"human review", func(t *plan.Task) { t.Type = plan.TypeHumanReview }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tasks("t: Search the web for hotels")
			tc.change(&p.Tasks[0])
			found := issuesOf(critic.Review(p), critic.CheckOptimismBias)
			assert.Equal(t, tc.flag, len(found) == 1, "%v", found)
		})
	}
}

func TestOrphanTask(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       *plan.Plan
		orphans []string
	}{
		{"one task", tasks("a: x"), nil},
		{"all in the last phase", tasks("a: x", "b: y"), nil},
		{"unused in phase 0", tasks("a: x", "b: y", "c: {{results.a}} <- a"), []string{"b"}},
		{"last phase is never orphan", tasks("a: x", "b: {{results.a}} <- a", "c: {{results.a}} <- a"), nil},
		{"used in a chain", tasks("a: x", "b: {{results.a}} <- a", "c: {{results.b}} <- b"), nil},
		{"unused in a middle phase", tasks("a: x", "b: {{results.a}} <- a", "c: {{results.a}} <- a", "d: {{results.b}} <- b"), []string{"c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, is := range issuesOf(critic.Review(tc.p), critic.CheckOrphanTask) {
				assert.Equal(t, critic.Info, is.Severity)
				got = append(got, is.TaskID)
			}
			assert.Equal(t, tc.orphans, got)
		})
	}
}

func TestMissingGate(t *testing.T) {
	three := []string{"a: x", "b: y", "c: z"}
	for _, tc := range []struct {
		name string
		p    *plan.Plan
		flag bool
	}{
		{"two tasks", tasks("a: x", "b: y"), false},
		{"three tasks, nothing after", tasks(three...), true},
		{"three tasks, then a task", tasks(append(three, "d: {{results.a}} {{results.b}} {{results.c}} <- a b c")...), true},
		{"three tasks, then a gate", gate(tasks(append(three, "g: combine <- a b c")...), "g"), false},
		{"three tasks, a gate two phases later", gate(tasks(append(three, "d: {{results.a}} {{results.b}} {{results.c}} <- a b c", "g: combine <- d")...), "g"), false},
		{"a gate in the same phase does not count", gate(tasks("a: x", "b: y", "g: combine"), "g"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found := issuesOf(critic.Review(tc.p), critic.CheckMissingGate)
			if !tc.flag {
				assert.Empty(t, found)
				return
			}
			require.Len(t, found, 1)
			assert.Equal(t, critic.Warning, found[0].Severity)
			assert.Equal(t, tc.p.Tasks[0].ID, found[0].TaskID, "reported on the phase's first task")
		})
	}
}

func TestParallelExplosion(t *testing.T) {
	wide := func(n int) *plan.Plan {
		var specs []string
		var ids []string
		for i := range n {
			specs = append(specs, fmt.Sprintf("t%d: part %d", i, i))
			ids = append(ids, fmt.Sprintf("t%d", i))
		}
		return gate(tasks(append(specs, "g: merge <- "+strings.Join(ids, " "))...), "g")
	}
	assert.Empty(t, issuesOf(critic.Review(wide(10)), critic.CheckParallelExplosion), "10 tasks")
	found := issuesOf(critic.Review(wide(11)), critic.CheckParallelExplosion)
	require.Len(t, found, 1, "11 tasks")
	assert.Equal(t, critic.Warning, found[0].Severity, "a heuristic is a warning, never critical")
	assert.Equal(t, "t0", found[0].TaskID)
	assert.Contains(t, found[0].Message, "11 tasks")
}

func TestDisconnectedFlow(t *testing.T) {
	review := func(p *plan.Plan, id string) *plan.Plan {
		for i := range p.Tasks {
			if p.Tasks[i].ID == id {
				p.Tasks[i].Type = plan.TypeHumanReview
			}
		}
		return p
	}
	wired := tasks("a: x", "b: y", "c: combine <- a b")
	wired.Tasks[2].Inputs = map[string]plan.InputRef{"first": {From: "a"}, "second": {From: "b", Slot: "items"}}
	for _, tc := range []struct {
		name string
		p    *plan.Plan
		sev  critic.Severity // "" for no issue
		msg  string
	}{
		{"uses none", tasks("a: x", "b: y", "c: combine <- a b"), critic.Warning, "(a, b)"},
		{"uses some", tasks("a: x", "b: y", "c: combine {{results.a}} <- a b"), critic.Info, "but not b"},
		{"uses all by templates", tasks("a: x", "b: y", "c: {{results.a.items}} and {{ results.b }} <- a b"), "", ""},
		{"uses all by wiring", wired, "", ""},
		{"names the dependency", tasks("fetch: x", "sum: summarise what fetch found <- fetch"), "", ""},
		{"names it in another case", tasks("fetch: x", "sum: summarise the Fetch output <- fetch"), "", ""},
		{"id inside a word is not naming it", tasks("a: x", "b: use the data <- a"), critic.Warning, "(a)"},
		{"id inside an identifier is not naming it", tasks("fetch: x", "b: run fetch_all <- fetch"), critic.Warning, "(fetch)"},
		{"a gate is exempt", gate(tasks("a: x", "g: combine <- a"), "g"), "", ""},
		{"a review is exempt", review(tasks("a: x", "r: approve <- a"), "r"), "", ""},
		{"waiting for a review is a use", review(tasks("a: x", "r: approve", "b: publish <- r"), "r"), "", ""},
		{"a review does not count among the unused", review(tasks("a: x", "r: approve", "b: publish <- r a"), "r"), critic.Warning, "(a)"},
		{"duplicated dependency", tasks("a: x", "b: y", "c: {{results.a}} <- a a b"), critic.Info, "but not b"},
		{"a missing dependency is reported once, as missing", tasks("a: x", "b: {{results.a}} <- a zz"), "", ""},
		{"only a missing dependency", tasks("b: y <- zz"), "", ""},
		{"a self dependency is reported once, as such", tasks("a: x", "b: y <- a b"), critic.Warning, "(a)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found := issuesOf(critic.Review(tc.p), critic.CheckDisconnectedFlow)
			if tc.sev == "" {
				assert.Empty(t, found)
				return
			}
			require.Len(t, found, 1)
			assert.Equal(t, tc.sev, found[0].Severity)
			assert.Equal(t, "depends_on", found[0].Field)
			assert.Contains(t, found[0].Message, tc.msg)
		})
	}
}

func TestPredicates(t *testing.T) {
	p := tasks("a: x", "b: {{results.a}} <- a", "c: {{results.b}} <- b", "d: {{results.c}} <- c")
	p.Tasks[0].Verification = "(> (count data/result) 0"
	p.Tasks[1].Verification = "(> (count data/result) 0"               // the same: checked once, reported twice
	p.Tasks[2].Verification = "(count data/result)"                    // a number: never passes
	p.Tasks[3].Verification = `(if (empty? data/result) "empty" true)` // fine
	rep := critic.Review(p)

	bad := issuesOf(rep, critic.CheckInvalidPredicate)
	require.Len(t, bad, 2)
	for i, is := range bad {
		assert.Equal(t, p.Tasks[i].ID, is.TaskID)
		assert.Equal(t, critic.Critical, is.Severity)
		assert.Equal(t, "verification", is.Field)
		assert.Regexp(t, `does not compile: \d+:\d+: `, is.Message, "the message has line:column")
	}
	never := issuesOf(rep, critic.CheckPredicateNever)
	require.Len(t, never, 1)
	assert.Equal(t, "c", never[0].TaskID)
	assert.Equal(t, critic.Warning, never[0].Severity)
	assert.Regexp(t, `can never pass: 1:1: `, never[0].Message)

	p.Tasks[2].Verification = "false"
	never = issuesOf(critic.Review(p), critic.CheckPredicateNever)
	require.Len(t, never, 1, "the constant false")
}

// A task's when condition is checked like its verification, under its own
// field, with the plan's other predicates.
func TestConditions(t *testing.T) {
	withWhen := func(srcs ...string) *plan.Plan {
		p := tasks("a: x", "b: y <- a")
		p.Tasks[1].When, p.Tasks[1].Verification = srcs[0], srcs[1]
		return p
	}
	for _, tc := range []struct {
		name, when, verification string
		want                     []string // check:field:message part
	}{
		{name: "a condition that holds", when: `(= (get data/depends "a") "go")`},
		{name: "a condition that does not compile", when: `(= (get data/depends "a")`,
			want: []string{critic.CheckInvalidPredicate + ":when:the condition does not compile: 1:1: "}},
		{name: "an unknown function", when: `(equals (get data/depends "a") "go")`,
			want: []string{critic.CheckInvalidPredicate + ":when:the condition does not compile: 1:2: unknown function equals"}},
		{name: "a condition that never holds", when: `false`,
			want: []string{critic.CheckPredicateNever + ":when:the condition can never hold, so the task never runs: 1:1: "}},
		{name: "a condition that returns a number", when: `(count data/depends)`,
			want: []string{critic.CheckPredicateNever + ":when:the condition can never hold, so the task never runs: 1:1: "}},
		{name: "both fields, each reported, in the report's order", when: `(= 1`, verification: `(= 1`,
			want: []string{critic.CheckInvalidPredicate + ":verification:the predicate does not compile", critic.CheckInvalidPredicate + ":when:the condition does not compile"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := withWhen(tc.when, tc.verification)
			for _, opts := range [][]critic.Option{nil, {critic.WithPredicates(verify.NewSet())}} {
				var got []string
				for _, is := range critic.Review(p, opts...).Issues {
					if is.Check == critic.CheckInvalidPredicate || is.Check == critic.CheckPredicateNever {
						assert.Equal(t, "b", is.TaskID)
						assert.Equal(t, p.Tasks[1].Pos, is.Pos)
						got = append(got, is.Check+":"+is.Field+":"+is.Message)
					}
				}
				require.Len(t, got, len(tc.want), "%q", got)
				for k := range got {
					assert.Contains(t, got[k], tc.want[k])
				}
			}
		})
	}
}

// A dependency the condition names is one the task uses.
func TestDisconnectedFlowCountsTheCondition(t *testing.T) {
	p := tasks("triage: x", "page: page the on-call engineer <- triage")
	assert.Len(t, issuesOf(critic.Review(p), critic.CheckDisconnectedFlow), 1)
	p.Tasks[1].When = `(= (get-in data/depends ["triage" "severity"]) "high")`
	assert.Empty(t, issuesOf(critic.Review(p), critic.CheckDisconnectedFlow))
}

func TestRetryWithoutBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*plan.Task)
		field  string // "" for no issue
	}{
		{"defaults", func(t *plan.Task) {}, ""},
		{"max_retries 0, no retry policy", func(t *plan.Task) { t.MaxRetries = 0; t.OnVerificationFailure = plan.PolicySkip }, ""},
		{"on_failure retry", func(t *plan.Task) { t.MaxRetries = 0; t.OnFailure = plan.PolicyRetry }, "on_failure"},
		{"on_failure retry with a budget", func(t *plan.Task) { t.MaxRetries = 1; t.OnFailure = plan.PolicyRetry }, ""},
		{"on_verification_failure retry without a verification", func(t *plan.Task) { t.MaxRetries = 0 }, ""},
		{"on_verification_failure retry with a verification", func(t *plan.Task) { t.MaxRetries = 0; t.Verification = "true" }, "on_verification_failure"},
		{"on_verification_failure retry with a rubric", func(t *plan.Task) { t.MaxRetries = 0; t.Rubric = "cites its sources" }, "on_verification_failure"},
		{"on_verification_failure retry on a gate", func(t *plan.Task) { t.MaxRetries = 0; t.Type = plan.TypeSynthesisGate; t.DependsOn = []string{"a"} }, "on_verification_failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tasks("a: x", "b: use {{results.a}} <- a")
			tc.change(&p.Tasks[1])
			found := issuesOf(critic.Review(p), critic.CheckRetryWithoutBudget)
			if tc.field == "" {
				assert.Empty(t, found)
				return
			}
			require.Len(t, found, 1)
			assert.Equal(t, critic.Warning, found[0].Severity)
			assert.Equal(t, tc.field, found[0].Field)
		})
	}
}

func TestGateWithoutInputs(t *testing.T) {
	found := issuesOf(critic.Review(gate(tasks("g: combine"), "g")), critic.CheckGateWithoutInputs)
	require.Len(t, found, 1)
	assert.Equal(t, critic.Warning, found[0].Severity, "a heuristic is a warning, never critical")
	assert.Empty(t, issuesOf(critic.Review(gate(tasks("a: x", "g: combine <- a"), "g")), critic.CheckGateWithoutInputs))
}

// With a registry, an unknown agent is an unknown worker, not both.
func TestUnknownWorkerReplacesUnknownAgent(t *testing.T) {
	p := tasks("a: scrape the prices")
	p.Tasks[0].Agent = "scrapper"
	without := critic.Review(p)
	assert.Equal(t, []string{string(plan.CodeUnknownAgent)}, checksOf(without))
	with := critic.Review(p, critic.WithCatalog(hostRegistry(t)))
	require.Equal(t, []string{critic.CheckUnknownWorker}, checksOf(with))
	assert.Equal(t, critic.Critical, with.Issues[0].Severity)
	assert.Contains(t, with.Recommendations[0], "worker of the registry")

	p.Tasks[0].Agent = "scraper"
	assert.Empty(t, critic.Review(p, critic.WithCatalog(hostRegistry(t))).Issues)
}

func TestUnknownTool(t *testing.T) {
	p := tasks("a: read the paper")
	p.Agents = map[string]plan.Agent{"reader": {Tools: []string{"arxiv", "browse"}}, "writer": {Tools: []string{"shell"}}}
	assert.Empty(t, issuesOf(critic.Review(p), critic.CheckUnknownTool), "without a catalog tools are not checked")
	found := issuesOf(critic.Review(p, critic.WithCatalog(toolCatalog{"arxiv"})), critic.CheckUnknownTool)
	require.Len(t, found, 2)
	assert.Equal(t, "agents.reader.tools", found[0].Field)
	assert.Contains(t, found[0].Message, `"browse"`)
	assert.Equal(t, "agents.writer.tools", found[1].Field)
	assert.Len(t, issuesOf(critic.Review(p, critic.WithCatalog(toolCatalog{})), critic.CheckUnknownTool), 3, "an empty catalog has no tools")
}

func TestUnknownKeyDidYouMean(t *testing.T) {
	rep := critic.ReviewSource([]byte(`{"mision": "m", "colour": 1,
		"agents": {"w": {"prompt": "p", "tols": ["x"]}},
		"tasks": [{"id": "a", "input": "x", "agent": "w", "depend_on": []}]}`))
	got := map[string]string{}
	for _, is := range issuesOf(rep, critic.CheckUnknownKey) {
		assert.Equal(t, critic.Warning, is.Severity)
		assert.True(t, is.Pos.IsValid(), "%v", is)
		got[is.Field] = is.Message
	}
	assert.Contains(t, got["mision"], `did you mean "mission"?`)
	assert.NotContains(t, got["colour"], "did you mean")
	assert.Contains(t, got["agents.w.tols"], `did you mean "tools"?`)
	assert.Contains(t, got["depend_on"], `did you mean "depends_on"?`)
}

// Words in {{results...}} templates name results, not operations.
func TestOptimismBiasIgnoresTemplates(t *testing.T) {
	rep := critic.ReviewSource([]byte(`{"tasks": [
		{"id": "fetch", "input": "Collect notes", "on_failure": "retry"},
		{"id": "sum", "input": "Summarise {{results.fetch.items}}", "depends_on": ["fetch"]}]}`))
	for _, is := range rep.Issues {
		assert.NotEqual(t, critic.CheckOptimismBias, is.Check, "%s", is)
	}
	rep = critic.ReviewSource([]byte(`{"tasks": [{"id": "a", "input": "Fetch the page"}, {"id": "b", "input": "Fetch {{results.a}}", "depends_on": ["a"]}]}`))
	var flagged []string
	for _, is := range rep.Issues {
		if is.Check == critic.CheckOptimismBias {
			flagged = append(flagged, is.TaskID)
		}
	}
	assert.Equal(t, []string{"a", "b"}, flagged, "words outside templates still count")
}

// A plan without tasks scores the lowest, like a text without a plan.
func TestEmptyPlanScoresLowest(t *testing.T) {
	for _, src := range []string{`{"tasks": []}`, `{"tasks": [1]}`, `{"goal": "x"}`} {
		rep := critic.ReviewSource([]byte(src))
		assert.Equal(t, 1, rep.Score, src)
		assert.Equal(t, critic.NoPlan, rep.Summary, src)
	}
	rep := critic.Review(&plan.Plan{})
	assert.Equal(t, 1, rep.Score)
	assert.Equal(t, critic.NoPlan, rep.Summary)
}

// toolCatalog is a host catalog of tools and no workers.
type toolCatalog []string

func (toolCatalog) WorkerOutputs(string) ([]string, bool) { return nil, false }

func (c toolCatalog) HasTool(name string) bool { return slices.Contains(c, name) }
