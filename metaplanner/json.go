package metaplanner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
)

// OutcomeVersion is the version of the JSON form of an [Outcome] that
// [Outcome.MarshalJSON] writes, and the newest [Outcome.UnmarshalJSON]
// reads.
const OutcomeVersion = 1

// ErrOutcomeVersion is the error of [Outcome.UnmarshalJSON] for a document
// of a version newer than [OutcomeVersion], or not a version at all.
var ErrOutcomeVersion = errors.New("unsupported planning outcome version")

// Outcome is how a planning ended, in the form a host prints or sends: the
// planner's [Result] and, when the planner found no plan to use, its
// error. Its JSON form is the one document of a planning.
type Outcome struct {
	// Result is what [Planner.Plan] returned; nil reads as an empty
	// result.
	Result *Result
	// Err is the error [Planner.Plan] returned with the result, such as a
	// *[PlanError]; nil when the planner answered.
	Err error
}

// outcomeDoc is the JSON form of an Outcome. The order of its fields is
// the order of the keys in the document.
type outcomeDoc struct {
	Version  json.Number `json:"version"`
	Route    Route       `json:"route"`
	Plan     *plan.Plan  `json:"plan"`
	Answer   *string     `json:"answer"`
	Question *string     `json:"question"`
	Reason   string      `json:"reason"`
	Report   reportDoc   `json:"report"`
	Attempts int         `json:"attempts"`
	Usage    llm.Usage   `json:"usage"`
	Error    *string     `json:"error,omitempty"`
}

type reportDoc struct {
	Score   int            `json:"score"`
	Summary string         `json:"summary"`
	Issues  []critic.Issue `json:"issues"`
}

// MarshalJSON writes o as one document:
//
//	{"version": 1, "route", "plan", "answer", "question", "reason",
//	 "report": {"score", "summary", "issues": [Issue]}, "attempts",
//	 "usage": {"prompt_tokens", "completion_tokens"}, "error"}
//
// "plan" is the canonical plan of [RoutePlan], "answer" the answer of
// [RouteSynthesis], "question" the question of [RouteClarify]; each is
// null on the other routes. With an error, all three are null — a plan
// the planner did not accept must not run — and "error" is the error's
// text; without one, "error" is left out. "issues" is a list even when
// empty. Refreshes and Raw are not written. <, > and & are written as
// they are, unless the caller's encoder escapes HTML, as json.Marshal
// does.
func (o Outcome) MarshalJSON() ([]byte, error) {
	res := o.Result
	if res == nil {
		res = &Result{}
	}
	doc := outcomeDoc{
		Version:  json.Number(strconv.Itoa(OutcomeVersion)),
		Route:    res.Route,
		Reason:   res.Reason,
		Report:   reportDoc{Score: res.Report.Score, Summary: res.Report.Summary, Issues: res.Report.Issues},
		Attempts: res.Attempts,
		Usage:    res.Usage,
	}
	if doc.Report.Issues == nil {
		doc.Report.Issues = []critic.Issue{}
	}
	switch {
	case o.Err != nil:
		text := o.Err.Error()
		doc.Error = &text
	case res.Route == RouteSynthesis:
		doc.Answer = &res.Answer
	case res.Route == RouteClarify:
		doc.Question = &res.Question
	case res.Route == RoutePlan:
		doc.Plan = res.Plan
	}
	return jsonv.Marshal(doc)
}

// UnmarshalJSON reads o from the form [Outcome.MarshalJSON] writes, the
// plan as [plan.Parse] reads it. A document without a version is read as
// version 1; a newer one is an error matching [ErrOutcomeVersion]. An
// error comes back as an error whose text is the one written: errors.Is
// and errors.As against the original error do not survive the round trip.
func (o *Outcome) UnmarshalJSON(data []byte) error {
	var doc outcomeDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("planning outcome: %w", err)
	}
	if doc.Version != "" {
		if n, err := doc.Version.Int64(); err != nil || n < 1 || n > OutcomeVersion {
			return fmt.Errorf("%w %s: this reads versions up to %d", ErrOutcomeVersion, doc.Version, OutcomeVersion)
		}
	}
	res := &Result{
		Route: doc.Route, Plan: doc.Plan, Reason: doc.Reason, Attempts: doc.Attempts, Usage: doc.Usage,
		Report: critic.Report{Score: doc.Report.Score, Summary: doc.Report.Summary, Issues: doc.Report.Issues},
	}
	if doc.Answer != nil {
		res.Answer = *doc.Answer
	}
	if doc.Question != nil {
		res.Question = *doc.Question
	}
	*o = Outcome{Result: res}
	if doc.Error != nil {
		o.Err = textError(*doc.Error)
	}
	return nil
}

// textError is an error read back from its text.
type textError string

func (e textError) Error() string { return string(e) }
