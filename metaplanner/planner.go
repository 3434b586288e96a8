package metaplanner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/verify"
)

// Defaults of the options.
const (
	// DefaultMaxCorrections is how many times Plan hands critical findings
	// back to the model for a corrected answer.
	DefaultMaxCorrections = 2
	// DefaultMaxData bounds the text of one completed result, failed output
	// or earlier trial in a replan prompt, in bytes.
	DefaultMaxData = 4 << 10
	// DefaultMaxRefreshes is how many times Plan asks the host's
	// [ContextSource] for more context.
	DefaultMaxRefreshes = 2
)

// ErrNoValidPlan is matched by the error of [Planner.Plan] and
// [Planner.Replan] when the model gave no acceptable answer within its
// corrections; the error is a *[PlanError].
var ErrNoValidPlan = errors.New("no valid plan")

// ErrEmptyMission is matched by the error of [Planner.Plan], and of
// [Planner.Replan] when neither the mission nor the failed plan says what the
// plan is for.
var ErrEmptyMission = errors.New("the mission is empty")

// PlanError is the error of a planning that ended without an acceptable
// answer: the last answer still had critical findings. It matches
// [ErrNoValidPlan].
type PlanError struct {
	// Report is the review of the last answer.
	Report critic.Report
	// Attempts counts the answers asked for.
	Attempts int
}

// Error names the critical findings of the last answer.
func (e *PlanError) Error() string {
	var crit []string
	for _, is := range e.Report.Issues {
		if is.Severity == critic.Critical {
			crit = append(crit, finding(is))
		}
	}
	const show = 3
	more := ""
	if len(crit) > show {
		more = fmt.Sprintf("; and %d more", len(crit)-show)
		crit = crit[:show]
	}
	return fmt.Sprintf("metaplanner: %s after %d %s: %s%s", ErrNoValidPlan, e.Attempts, plural(e.Attempts, "attempt", "attempts"), strings.Join(crit, "; "), more)
}

// Is reports whether target is [ErrNoValidPlan].
func (e *PlanError) Is(target error) bool { return target == ErrNoValidPlan }

// Route is how the model chose to handle a mission.
type Route string

// Routes.
const (
	// RoutePlan: the mission needs work done; [Result.Plan] is the plan.
	RoutePlan Route = "plan"
	// RouteSynthesis: the model answered directly; [Result.Answer] is the
	// answer.
	RouteSynthesis Route = "synthesis"
	// RouteClarify: the mission is too ambiguous to plan; [Result.Question]
	// is the question for the user.
	RouteClarify Route = "clarify"
	// RouteRefreshContext: the model asks the host for more context before
	// it plans. [Planner.Plan] offers it only with a [WithContextSource],
	// and answers it itself: it hands the request to the source and asks
	// again with the context, so a Result never has this route.
	RouteRefreshContext Route = "refresh_context"
	// RouteGiveUp: a repair found no way to reach the mission;
	// [Result.Reason] says why. Only [Planner.Replan] offers it.
	RouteGiveUp Route = "give_up"
)

// Checks of the findings [Planner.Plan] and [Planner.Replan] add to the critic's, in
// Report.Issues. All are critical.
const (
	// CheckInvalidRoute: the envelope's route is not plan, synthesis or
	// clarify.
	CheckInvalidRoute = "invalid_route"
	// CheckMissingPlan: the route is plan but the answer holds no plan.
	CheckMissingPlan = "missing_plan"
	// CheckMissingAnswer: the route is synthesis but the answer is empty.
	CheckMissingAnswer = "missing_answer"
	// CheckMissingQuestion: the route is clarify but the question is empty.
	CheckMissingQuestion = "missing_question"
	// CheckRepairRoute: a replan answered with a route other than plan
	// or give_up.
	CheckRepairRoute = "repair_route"
	// CheckForbiddenRoute: the answer took a route the host forbade
	// ([WithForbiddenRoutes]), or one this request does not offer.
	CheckForbiddenRoute = "forbidden_route"
	// CheckMissingReason: the route is give_up, or a round's action is
	// failed, but the answer gives no reason.
	CheckMissingReason = "missing_reason"
	// CheckMissingRequest: the route is refresh_context but the answer
	// asks for nothing.
	CheckMissingRequest = "missing_context_request"
	// CheckNoMoreContext: the route is refresh_context but the host's
	// context was asked for [WithMaxRefreshes] times already.
	CheckNoMoreContext = "no_more_context"
	// CheckDroppedCompleted: a repair plan leaves out completed tasks.
	CheckDroppedCompleted = "dropped_completed"
)

// Result is the outcome of [Planner.Plan] or [Planner.Replan].
type Result struct {
	// Route is how the model chose to handle the mission; always [RoutePlan]
	// for an accepted repair.
	Route Route
	// Plan is the plan of [RoutePlan]. With [ErrNoValidPlan] it is the last
	// plan read, which must not be run, or nil when none could be read.
	Plan *plan.Plan
	// Answer is the direct answer of [RouteSynthesis].
	Answer string
	// Question is the question for the user of [RouteClarify].
	Question string
	// Reason is the model's short rationale for its route: why this plan,
	// why a direct answer or a question, why a repair gives up. Empty when
	// the model gave none; a give-up always has one.
	Reason string
	// Refreshes counts the times the model asked for more context
	// ([RouteRefreshContext]) and got it.
	Refreshes int
	// Report is the critic's review of the plan: its warnings when the plan
	// was accepted, its critical findings with [ErrNoValidPlan]. Empty for
	// the other routes.
	Report critic.Report
	// Attempts counts the requests sent to the model: 1 plus the
	// corrections asked for plus the refreshes.
	Attempts int
	// Usage sums the tokens of every request.
	Usage llm.Usage
	// Raw is the text of the model's last answer.
	Raw string
}

// Option configures a [Planner].
type Option func(*Planner)

// WithRegistry lists the host's workers and tools in the prompts and
// reviews plans against them: tasks may name only its workers, wire only
// the output slots they declare, and agents may use only its tools.
func WithRegistry(r *registry.Registry) Option { return func(p *Planner) { p.registry = r } }

// WithModel names the model to ask; the default is the client's.
func WithModel(model string) Option { return func(p *Planner) { p.model = model } }

// WithMaxCorrections sets how many times [Planner.Plan] hands critical findings back
// to the model for a corrected answer; 0 accepts or rejects the first
// answer. Default [DefaultMaxCorrections]. [Planner.Replan] asks for at most one
// correction, none when n is 0.
func WithMaxCorrections(n int) Option {
	return func(p *Planner) { p.maxCorrections = max(0, n) }
}

// WithTemperature sets the sampling temperature; the default is the
// server's.
func WithTemperature(t float64) Option { return func(p *Planner) { p.temperature = &t } }

// WithMaxData bounds the text of each completed result, failed output and
// earlier trial in a replan prompt, in bytes; longer text is cut with a
// marker that says so. Default [DefaultMaxData]; a negative n means no limit.
func WithMaxData(n int) Option {
	return func(p *Planner) {
		if n == 0 {
			n = DefaultMaxData
		}
		p.maxData = n
	}
}

// WithLimits sets the limits plans are parsed and validated against.
// Default plan.DefaultLimits().
func WithLimits(l plan.Limits) Option { return func(p *Planner) { p.limits = l } }

// WithBrief uses a short system prompt — the answer forms and the plan's
// fields, without the guidance, the predicate examples and the example
// plan — for models with a small context, such as local models of 2–4k
// tokens. Plans are reviewed as strictly as ever; expect more corrections.
func WithBrief() Option { return func(p *Planner) { p.brief = true } }

// WithForbiddenRoutes forbids routes to [Planner.Plan], for hosts that run
// unattended: [RouteSynthesis] (a direct answer) or [RouteClarify] (a
// question nobody is there to answer). The schema and the prompts no
// longer offer them, and an answer that takes one anyway is corrected like
// any invalid answer ([CheckForbiddenRoute]), then refused with
// [ErrNoValidPlan]. [RoutePlan] cannot be forbidden; other routes are
// ignored.
func WithForbiddenRoutes(routes ...Route) Option {
	return func(p *Planner) {
		for _, r := range routes {
			if r == RouteSynthesis || r == RouteClarify {
				p.forbidden[r] = true
			}
		}
	}
}

// WithContext hands the model context the host holds — results of earlier
// runs, documents, memories — with [Planner.Plan]'s mission. Each item is
// a data block of [llm.WriteData] tagged with its provenance: the model
// reads it as data, never as instructions, whoever wrote it.
func WithContext(items ...Context) Option {
	return func(p *Planner) { p.context = append(p.context, items...) }
}

// WithContextSource offers the model [RouteRefreshContext]: when the
// mission needs context the host holds that the request lacks, the model
// says what it needs, [Planner.Plan] asks src, and planning goes on with
// what src returned, as [WithContext] items, up to [WithMaxRefreshes]
// times.
func WithContextSource(src ContextSource) Option { return func(p *Planner) { p.source = src } }

// WithMaxRefreshes bounds how many times [Planner.Plan] asks its
// [ContextSource] for more context; past it, a refresh_context answer is
// corrected like an invalid one ([CheckNoMoreContext]). Default
// [DefaultMaxRefreshes]; a negative n is 0.
func WithMaxRefreshes(n int) Option { return func(p *Planner) { p.maxRefreshes = max(0, n) } }

// Planner asks an LLM for plans and repair plans. Create it with [New].
type Planner struct {
	client         llm.Client
	registry       *registry.Registry
	model          string
	maxCorrections int
	temperature    *float64
	maxData        int
	limits         plan.Limits
	brief          bool
	predicates     *verify.Set
	memory         *Memory
	forbidden      map[Route]bool
	context        []Context
	source         ContextSource
	maxRefreshes   int
}

// WithPredicates compiles the predicates of the plans the planner reviews
// in s, so that an executor given the same set (executor.WithPredicates)
// compiles none of them again. The set grows with every plan reviewed:
// give a planner that lives long a set per mission. Default: each review
// compiles in a set of its own.
func WithPredicates(s *verify.Set) Option { return func(p *Planner) { p.predicates = s } }

// New returns a [Planner] that asks c. A Planner is safe for concurrent use;
// there is no useful zero Planner.
func New(c llm.Client, opts ...Option) *Planner {
	p := &Planner{client: c, maxCorrections: DefaultMaxCorrections, maxData: DefaultMaxData,
		maxRefreshes: DefaultMaxRefreshes, forbidden: make(map[Route]bool)}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Plan asks the model how to handle mission and, when it plans, for a plan
// the critic accepts. The [Result] is never nil: with an error it holds what
// is known, the usage of the requests made included. When the last answer
// still has critical findings, the error is a *[PlanError] matching
// [ErrNoValidPlan] and the Result holds that answer. A synthesis or clarify
// answer, unless forbidden ([WithForbiddenRoutes]), is a success. A
// refresh_context answer ([WithContextSource]) is answered with the
// host's context, and planning goes on. A plan whose model left its mission empty gets
// mission, so that the plan, written to a file, can be repaired toward it.
func (p *Planner) Plan(ctx context.Context, mission string) (*Result, error) {
	if strings.TrimSpace(mission) == "" {
		return &Result{}, fmt.Errorf("metaplanner: plan: %w", ErrEmptyMission)
	}
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: p.systemPrompt(false)},
		{Role: llm.RoleUser, Content: p.planPrompt(mission)},
	}
	res, err := p.converse(ctx, "plan", msgs, p.maxCorrections, false, nil)
	keepMission(res, mission)
	return res, err
}

// keepMission gives res's plan mission when the model left its own empty:
// a plan without one cannot be repaired later.
func keepMission(res *Result, mission string) {
	if res.Plan != nil && strings.TrimSpace(res.Plan.Mission) == "" {
		res.Plan.Mission = mission
	}
}

// converse asks the model, reads and reviews its answer, and hands the
// critical findings back up to corrections times. repair requires route
// plan or give_up; extra adds findings about a readable plan. A
// refresh_context answer, when offered and not over the bound, is
// answered with the source's context and costs no correction.
func (p *Planner) converse(ctx context.Context, op string, msgs []llm.Message, corrections int, repair bool, extra func(*plan.Plan) []critic.Issue) (*Result, error) {
	allowed := p.routes(repair)
	schema := &llm.Schema{Name: SchemaName, Schema: p.AnswerSchema(repair)}
	res, _, err := p.exchange(ctx, op, msgs, corrections, repair,
		func(refreshes int) *llm.Schema {
			if slices.Contains(allowed, RouteRefreshContext) && refreshes >= p.maxRefreshes {
				// The host's context is spent: a model held to the
				// schema can no longer ask for more.
				l := p.leash(repair)
				l.routes = slices.DeleteFunc(slices.Clone(l.routes), func(r Route) bool { return r == RouteRefreshContext })
				return &llm.Schema{Name: SchemaName, Schema: buildSchema(l)}
			}
			return schema
		},
		func(ctx context.Context, content string, refreshes int) answer {
			return p.read(ctx, content, allowed, repair, refreshes, extra)
		})
	return res, err
}

// exchange asks the model for an answer of the schema for the refreshes
// so far, reads it with read (given them too), and hands the critical findings back up
// to corrections times; the answer is the last one read.
func (p *Planner) exchange(ctx context.Context, op string, msgs []llm.Message, corrections int, repair bool, schema func(refreshes int) *llm.Schema,
	read func(ctx context.Context, content string, refreshes int) answer) (*Result, answer, error) {
	if p.client == nil {
		return &Result{}, answer{}, fmt.Errorf("metaplanner: %s: the planner has no LLM client", op)
	}
	res := &Result{}
	corrected := 0
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return res, answer{}, fmt.Errorf("metaplanner: %s: %w", op, err)
		}
		resp, err := p.client.Complete(ctx, p.request(msgs, schema(res.Refreshes)))
		res.Attempts = attempt
		res.Usage = res.Usage.Add(resp.Usage)
		if err != nil {
			return res, answer{}, fmt.Errorf("metaplanner: %s: attempt %d: %w", op, attempt, err)
		}
		content := resp.Message.Content
		a := read(ctx, content, res.Refreshes)
		res.Route, res.Plan, res.Answer, res.Question, res.Reason, res.Report, res.Raw = a.route, a.plan, a.answer, a.question, a.reason, a.report, content
		if a.route == RouteRefreshContext && !a.report.Has(critic.Critical) {
			items, err := p.source.Context(ctx, a.request)
			if err != nil {
				return res, a, fmt.Errorf("metaplanner: %s: refresh context: %w", op, err)
			}
			res.Refreshes++
			msgs = append(msgs[:len(msgs):len(msgs)],
				llm.Message{Role: llm.RoleAssistant, Content: content},
				llm.Message{Role: llm.RoleUser, Content: p.refreshPrompt(items)})
			continue
		}
		if !a.report.Has(critic.Critical) {
			return res, a, nil
		}
		if corrected >= corrections {
			return res, a, &PlanError{Report: a.report, Attempts: attempt}
		}
		corrected++
		msgs = append(msgs[:len(msgs):len(msgs)],
			llm.Message{Role: llm.RoleAssistant, Content: content},
			llm.Message{Role: llm.RoleUser, Content: feedback(a.report, resp.FinishReason, repair)})
	}
}

// request builds the request of msgs.
func (p *Planner) request(msgs []llm.Message, schema *llm.Schema) llm.Request {
	req := llm.Request{
		Model:    p.model,
		Messages: append([]llm.Message(nil), msgs...),
		Schema:   schema,
	}
	if p.temperature != nil {
		t := *p.temperature
		req.Temperature = &t
	}
	return req
}

// criticOptions are the options of every review.
func (p *Planner) criticOptions() []critic.Option {
	opts := []critic.Option{critic.WithLimits(p.limits)}
	if p.predicates != nil {
		opts = append(opts, critic.WithPredicates(p.predicates))
	}
	if p.registry != nil {
		opts = append(opts, critic.WithCatalog(p.registry))
	}
	return opts
}

// answer is what was read from one answer of the model.
type answer struct {
	route                    Route
	plan                     *plan.Plan
	answer, question, reason string
	request                  []string // the context a refresh asks for
	report                   critic.Report
	round                    *executor.RoundAnswer // the answer of Round
}

// envelope is the structured answer the schema asks for.
type envelope struct {
	route    string
	plan     json.RawMessage // nil when absent or null
	answer   string
	question string
	reason   string
	request  []string
	rest     map[string]json.RawMessage // the other keys
}

// read reads and reviews one answer; allowed are the routes offered,
// refreshes the context refreshes made so far.
func (p *Planner) read(ctx context.Context, content string, allowed []Route, repair bool, refreshes int, extra func(*plan.Plan) []critic.Issue) answer {
	src := []byte(content)
	env, ok := decodeEnvelope(content)
	if ok {
		route, known := parseRoute(env.route)
		if !known {
			return findings(answer{}, critic.Issue{
				Check: CheckInvalidRoute, Field: "route",
				Message:        fmt.Sprintf("route %q is not one of %s", env.route, routeList(allowed)),
				Recommendation: routeFix(allowed),
			})
		}
		a := answer{route: route, answer: strings.TrimSpace(env.answer), question: strings.TrimSpace(env.question),
			reason: strings.TrimSpace(env.reason), request: env.request}
		if repair && !slices.Contains(allowed, route) {
			return findings(a, critic.Issue{
				Check: CheckRepairRoute, Field: "route",
				Message:        fmt.Sprintf("a repair must be a plan, or give up, but the route is %q", route),
				Recommendation: `Answer with "route": "plan" and the repair plan under "plan", or with "route": "give_up" and the reason under "reason".`,
			})
		}
		if !slices.Contains(allowed, route) {
			return findings(a, critic.Issue{
				Check: CheckForbiddenRoute, Field: "route",
				Message:        fmt.Sprintf("route %q is not allowed here: the host accepts only %s", route, routeList(allowed)),
				Recommendation: routeFix(allowed),
			})
		}
		switch route {
		case RouteSynthesis:
			if a.answer == "" {
				return findings(a, critic.Issue{
					Check: CheckMissingAnswer, Field: "answer",
					Message:        `the route is "synthesis" but "answer" is empty`,
					Recommendation: `Put the answer under "answer", or plan with "route": "plan".`,
				})
			}
			return a
		case RouteClarify:
			if a.question == "" {
				return findings(a, critic.Issue{
					Check: CheckMissingQuestion, Field: "question",
					Message:        `the route is "clarify" but "question" is empty`,
					Recommendation: `Put the question for the user under "question", or plan with "route": "plan".`,
				})
			}
			return a
		case RouteGiveUp:
			if a.reason == "" {
				return findings(a, critic.Issue{
					Check: CheckMissingReason, Field: "reason",
					Message:        `the route is "give_up" but "reason" is empty`,
					Recommendation: `Say under "reason" why no repair can reach the mission, or repair with "route": "plan".`,
				})
			}
			return a
		case RouteRefreshContext:
			if len(a.request) == 0 {
				return findings(a, critic.Issue{
					Check: CheckMissingRequest, Field: "context_request",
					Message:        `the route is "refresh_context" but "context_request" asks for nothing`,
					Recommendation: `List what context you need under "context_request", or plan with "route": "plan".`,
				})
			}
			if refreshes >= p.maxRefreshes {
				return findings(a, critic.Issue{
					Check: CheckNoMoreContext, Field: "route",
					Message:        fmt.Sprintf("the host's context was refreshed %s already; there is no more", prose.Plural(refreshes, "time")),
					Recommendation: `Plan with the context you have: "route": "plan".`,
				})
			}
			return a
		}
		src = planSource(env)
		if src == nil {
			return findings(a, critic.Issue{
				Check: CheckMissingPlan, Field: "plan",
				Message:        `the route is "plan" but the answer holds no plan`,
				Recommendation: `Put the plan object, with its "tasks" list, under "plan".`,
			})
		}
		a.plan, a.report = p.review(ctx, src, extra)
		return a
	}
	a := answer{route: RoutePlan}
	a.plan, a.report = p.review(ctx, src, extra)
	return a
}

// routeList lists routes for a finding: "plan, synthesis or clarify".
func routeList(routes []Route) string {
	names := make([]string, len(routes))
	for i, r := range routes {
		names[i] = string(r)
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// routeFix is the recommendation of an answer whose route is not one of
// routes.
func routeFix(routes []Route) string {
	var forms []string
	for _, r := range routes {
		forms = append(forms, fmt.Sprintf("%q (with %s)", r, routeField[r]))
	}
	return `Set "route" to ` + strings.Join(forms, ", ") + "."
}

// routeField is where an answer of each route puts what it gives.
var routeField = map[Route]string{
	RoutePlan:           `"plan"`,
	RouteSynthesis:      `"answer"`,
	RouteClarify:        `"question"`,
	RouteRefreshContext: `"context_request"`,
	RouteGiveUp:         `"reason"`,
}

// BadAnswer is the summary of the report of an answer that does not follow
// the answer format: an unknown route, a plan route without a plan, a
// direct answer or question that is empty, a route that is not offered, a
// give-up without a reason.
const BadAnswer = "The answer does not follow the answer format; nothing can run."

// findings returns a with a report of the critical issues.
func findings(a answer, issues ...critic.Issue) answer {
	rep := critic.Report{Score: 1, Summary: BadAnswer}
	for _, is := range issues {
		is.Severity = critic.Critical
		rep.Issues = append(rep.Issues, is)
		rep.Recommendations = append(rep.Recommendations, is.Recommendation)
	}
	a.report = rep
	return a
}

// review parses src and reviews the plan. Parse problems are critical
// issues of the report, as with critic.ReviewSource; extra adds findings
// about a plan that could be read.
func (p *Planner) review(ctx context.Context, src []byte, extra func(*plan.Plan) []critic.Issue) (*plan.Plan, critic.Report) {
	opts := p.criticOptions()
	pl, err := plan.Parse(src, plan.WithLimits(p.limits))
	if pl != nil {
		// An envelope decodeEnvelope passed over (another object came
		// first in the answer, say) and Parse read as a plan: its keys
		// are not misspelled plan keys.
		pl.Unknown = slices.DeleteFunc(pl.Unknown, func(u plan.UnknownKey) bool {
			return u.TaskID == "" && envelopeKeys[u.Key]
		})
	}
	if pl == nil || len(pl.Tasks) == 0 && err != nil {
		return pl, critic.ReviewSource(src, opts...)
	}
	var more []critic.Issue
	for _, prob := range plan.Problems(err) {
		more = append(more, critic.Issue{
			Check: string(prob.Code), Severity: critic.Critical, TaskID: prob.TaskID, Field: prob.Field,
			Message: prob.Message, Recommendation: fix(string(prob.Code)), Pos: prob.Pos,
		})
	}
	if err != nil && more == nil {
		more = append(more, critic.Issue{Check: string(plan.CodeInvalidJSON), Severity: critic.Critical, Message: err.Error(), Recommendation: fix(string(plan.CodeInvalidJSON))})
	}
	if extra != nil {
		more = append(more, extra(pl)...)
	}
	if len(more) == 0 {
		return pl, critic.Review(pl, opts...)
	}
	rep, _ := critic.ReviewWith(ctx, pl, issues(more), opts...) // issues never fails
	return pl, rep
}

// issues is a critic.Reviewer that adds fixed findings.
type issues []critic.Issue

func (is issues) Review(context.Context, *plan.Plan, critic.Report) ([]critic.Issue, error) {
	return is, nil
}

// fix is the fix of a check the critic describes.
func fix(check string) string {
	r, _ := critic.Describe(check)
	return r.Fix
}

// decodeEnvelope finds the envelope in an answer: a JSON object with a
// "route" key, alone or in a fence or prose. A bare plan is no envelope.
func decodeEnvelope(content string) (envelope, bool) {
	obj, _, err := plan.ExtractJSON([]byte(content))
	if err != nil || obj[0] != '{' {
		return envelope{}, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return envelope{}, false
	}
	env := envelope{rest: m}
	take := func(keys ...string) (json.RawMessage, bool) {
		for _, k := range keys {
			if v, ok := m[k]; ok {
				delete(m, k)
				return v, true
			}
		}
		return nil, false
	}
	text := func(v json.RawMessage) string {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		return strings.TrimSpace(string(v))
	}
	route, ok := take("route", "route_to")
	if !ok {
		return envelope{}, false
	}
	env.route = text(route)
	if v, ok := take("plan"); ok && !isNull(v) {
		env.plan = v
	}
	if v, ok := take("answer"); ok && !isNull(v) {
		env.answer = text(v)
	}
	if v, ok := take("question", "clarification_question"); ok && !isNull(v) {
		env.question = text(v)
	}
	if v, ok := take("reason", "rationale", "reasoning"); ok && !isNull(v) {
		env.reason = text(v)
	}
	if v, ok := take("context_request", "refresh_context_request"); ok && !isNull(v) {
		var list []string
		if json.Unmarshal(v, &list) != nil {
			list = []string{text(v)}
		}
		for _, item := range list {
			if item = strings.TrimSpace(item); item != "" {
				env.request = append(env.request, item)
			}
		}
	}
	return env, true
}

// envelopeKeys are the keys of the envelope besides "plan".
var envelopeKeys = map[string]bool{
	"route": true, "route_to": true, "answer": true, "question": true, "clarification_question": true,
	"reason": true, "rationale": true, "reasoning": true, "context_request": true, "refresh_context_request": true,
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// planSource is the source of the plan of an envelope: its "plan" (a plan
// object, or a string holding one), or else the envelope's other keys when
// the model wrote the plan's fields beside the route. nil when there is no
// plan.
func planSource(env envelope) []byte {
	if env.plan != nil {
		var s string
		if json.Unmarshal(env.plan, &s) == nil {
			return []byte(s)
		}
		return env.plan
	}
	if len(env.rest) == 0 {
		return nil
	}
	b, err := json.Marshal(env.rest)
	if err != nil {
		return nil
	}
	return b
}

// parseRoute reads a route: its own name, or a synonym a model may write
// instead.
func parseRoute(s string) (Route, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "plan", "executor", "execute":
		return RoutePlan, true
	case "synthesis", "answer", "direct", "direct_answer":
		return RouteSynthesis, true
	case "clarify", "clarification", "question":
		return RouteClarify, true
	case "refresh_context", "refresh", "context":
		return RouteRefreshContext, true
	case "give_up", "giveup", "give up", "abort":
		return RouteGiveUp, true
	}
	return "", false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
