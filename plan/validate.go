package plan

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	jschema "github.com/dagent-dev/dagent/internal/schema"
)

// Validate reports every problem of the plan at once as a *[Error]: an empty
// plan, bad ids, duplicate ids, dependencies on missing tasks or on the task
// itself, cycles, unknown agents, inputs and {{results.ID}} templates that
// name a task that is not upstream, values out of range, an output schema
// that is not a JSON object or does not compile, and the limits.
// Problems come grouped by task, in source order, after the plan's own.
//
// An agent is known when the plan defines it, when it is [DefaultAgent], or
// when a worker option ([WithWorkers], [WithWorkerOutputs], [WithCatalog])
// names it; the plan must not define an agent with a worker's name. With
// worker outputs, inputs must read declared slots; with a catalog, the
// plan's agents must use its tools.
//
// Validate returns the error of [Plan.DAG]; a caller that goes on to use
// the plan's graph should call [Plan.DAG] alone.
func (p *Plan) Validate(opts ...Option) error {
	_, err := p.DAG(opts...)
	return err
}

// validateTask checks task i's fields, and returns its output schema
// compiled, if it has one that compiles.
func validateTask(p *Plan, i int, c *config, r *report) *jschema.Schema {
	t := &p.Tasks[i]
	if _, defined := p.Agents[t.Agent]; !defined && t.Agent != DefaultAgent && !c.isWorker(t.Agent) {
		msg := fmt.Sprintf("agent %q is not defined in the plan's agents and is not a registry worker", t.Agent)
		if t.Agent == "" {
			msg = fmt.Sprintf("the task names no agent; use %q or an agent of the plan", DefaultAgent)
		}
		r.add(i, CodeUnknownAgent, "agent", msg)
	}
	if !t.Type.Valid() {
		r.add(i, CodeInvalidType, "type", fmt.Sprintf("unknown task type %q; use task, synthesis_gate or human_review", t.Type))
	}
	if !t.OnFailure.Valid() {
		r.add(i, CodeInvalidOnFailure, "on_failure", fmt.Sprintf("unknown policy %q; use stop, skip, retry or replan", t.OnFailure))
	}
	if !t.OnVerificationFailure.Valid() {
		r.add(i, CodeInvalidOnVerificationFailure, "on_verification_failure", fmt.Sprintf("unknown policy %q; use stop, skip, retry or replan", t.OnVerificationFailure))
	}
	switch {
	case t.MaxRetries < 0:
		r.add(i, CodeInvalidMaxRetries, "max_retries", fmt.Sprintf("max_retries must be a non-negative integer, found %d", t.MaxRetries))
	case exceeds(t.MaxRetries, c.limits.MaxRetries):
		r.add(i, CodeTooManyRetries, "max_retries", fmt.Sprintf("max_retries is %d, over the limit of %d", t.MaxRetries, c.limits.MaxRetries))
	}
	if t.Timeout < 0 {
		r.add(i, CodeInvalidTimeout, "timeout", fmt.Sprintf("timeout %s is negative", t.Timeout))
	}
	if exceeds(len(t.Input), c.limits.MaxInputBytes) {
		r.add(i, CodeInputTooLarge, "input", fmt.Sprintf("input is %d bytes, over the limit of %d", len(t.Input), c.limits.MaxInputBytes))
	}
	if exceeds(len(t.Rubric), c.limits.MaxInputBytes) {
		// The judge is sent the rubric with every judgement, as the agent
		// is sent the input.
		r.add(i, CodeInputTooLarge, "rubric", fmt.Sprintf("rubric is %d bytes, over the limit of %d", len(t.Rubric), c.limits.MaxInputBytes))
	}
	if len(t.OutputSchema) > 0 {
		// The agent is sent the schema with every attempt, as it is sent
		// the input: the same limit bounds each.
		tooLarge := exceeds(len(t.OutputSchema), c.limits.MaxInputBytes)
		if tooLarge {
			r.add(i, CodeInputTooLarge, "output_schema", fmt.Sprintf("output_schema is %d bytes, over the limit of %d", len(t.OutputSchema), c.limits.MaxInputBytes))
		}
		if msg := badObject(t.OutputSchema); msg != "" {
			r.add(i, CodeInvalidField, "output_schema", "output_schema "+msg)
		} else if !tooLarge {
			// A schema that does not compile is a plan that cannot run,
			// told here, where dagent lint sees it; the one that compiles
			// is the DAG's, for the runner.
			s, err := jschema.Compile(t.OutputSchema)
			if err != nil {
				r.add(i, CodeInvalidField, "output_schema", "output_schema does not compile: "+err.Error())
			}
			return s
		}
	}
	return nil
}

// badObject says what keeps raw from being a JSON object that both
// encoding/json (which writes it) and Parse (which reads it back) accept, or
// returns "". Parse only ever produces such objects; Go code may not.
func badObject(raw []byte) string {
	if !json.Valid(raw) {
		return "is not valid JSON"
	}
	// Valid JSON has nothing but JSON white space around its value.
	n, _, err := readTree(bytes.TrimSpace(raw), 0)
	switch {
	case err != nil:
		return "is not valid JSON: " + err.Error()
	case n.kind != '{':
		return "must be a JSON Schema object, found " + n.kindName()
	}
	return ""
}

// badID says what is wrong with an id, or returns "". Ids are printed in
// terminals, reports and logs, and read by people deciding what ran: an id
// must show what it is, so it holds no control characters, no format
// characters (bidirectional overrides that reorder what is shown,
// zero-width characters that make two ids look alike) and no line or
// paragraph separators; max bounds its length in bytes (negative: no
// bound).
func badID(id string, max int) string {
	switch {
	case id == "":
		return "the task has an empty id"
	case exceeds(len(id), max):
		return fmt.Sprintf("id is %d bytes, over the limit of %d", len(id), max)
	case !utf8.ValidString(id):
		return fmt.Sprintf("id %q is not valid UTF-8", id)
	case strings.TrimSpace(id) != id:
		return fmt.Sprintf("id %q has leading or trailing space", id)
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return fmt.Sprintf("id %q holds control characters", id)
	case strings.IndexFunc(id, invisible) >= 0:
		return fmt.Sprintf("id %q holds bidirectional, zero-width or other invisible formatting characters; use letters, digits, _ and -", id)
	}
	return ""
}

// invisible reports whether r is a format character or a line or
// paragraph separator: it changes how text around it shows, or shows
// nothing.
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// suggest names the task a reference most likely meant when it differs only
// in case, spaces or dashes ("Fetch Data" for "fetch_data").
func (r *report) suggest(ref string) string {
	if r.norm == nil {
		r.norm = make(map[string]string, len(r.p.Tasks))
		for i := len(r.p.Tasks) - 1; i >= 0; i-- {
			r.norm[normalizeName(r.p.Tasks[i].ID)] = r.p.Tasks[i].ID
		}
	}
	if id, ok := r.norm[normalizeName(ref)]; ok && id != ref {
		return fmt.Sprintf("; did you mean %q?", id)
	}
	return ""
}

func at(pos Position) string {
	if !pos.IsValid() {
		return ""
	}
	return " at line " + strconv.Itoa(pos.Line)
}

// report collects problems by task so that they come out grouped by task in
// source order, plan-level problems first.
type report struct {
	p      *Plan
	plan   []*Problem
	byTask map[int][]*Problem
	norm   map[string]string // normalised id → id, for suggestions
}

func newReport(p *Plan) *report { return &report{p: p} }

func (r *report) add(i int, code Code, field, msg string) {
	if i < 0 {
		r.plan = append(r.plan, &Problem{Code: code, Field: field, Message: msg})
		return
	}
	if r.byTask == nil {
		r.byTask = make(map[int][]*Problem)
	}
	t := &r.p.Tasks[i]
	// A task without an id is named by its position, so that its problems
	// do not read as the plan's.
	id := cmp.Or(t.ID, "#"+strconv.Itoa(i+1))
	r.byTask[i] = append(r.byTask[i], &Problem{Code: code, TaskID: id, Field: field, Message: msg, Pos: t.Pos})
}

func (r *report) err() error {
	ps := problems(r.plan)
	for _, i := range sortedInts(r.byTask) {
		ps = append(ps, r.byTask[i]...)
	}
	return ps.err()
}

func sortedInts[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
