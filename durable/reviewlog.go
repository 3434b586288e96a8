package durable

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/user"
	"slices"

	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// EventReviewDecided is the event of a decision of a human review that
// [Resume] goes on with: its task is the review's, its time when the run
// was resumed with it, and its data a [ReviewDecision].
const EventReviewDecided runner.EventKind = "review_decided"

// ReviewDecision is the data of an [EventReviewDecided] event: who
// decided, and what.
type ReviewDecision struct {
	By       string `json:"by"`
	Approved bool   `json:"approved"`
	Comment  string `json:"comment,omitempty"`
}

// String says the decision as a run's timeline shows it: "approved by
// NAME", with the comment, on one line, after a colon.
func (d ReviewDecision) String() string {
	verdict := "rejected"
	if d.Approved {
		verdict = "approved"
	}
	s := verdict + " by " + d.By
	if d.Comment != "" {
		s += ": " + prose.Excerpt(prose.OneLine(d.Comment), 100)
	}
	return s
}

// DecisionOf returns the decision an [EventReviewDecided] event records;
// false for another event, or for one whose data is not a decision.
func DecisionOf(e store.Event) (ReviewDecision, bool) {
	var d ReviewDecision
	if runner.EventKind(e.Kind) != EventReviewDecided || json.Unmarshal(e.Data, &d) != nil {
		return d, false
	}
	return d, true
}

// WithReviewer names who made the decisions of [WithReviews], for the
// journal: [Resume] records each decision it goes on with as an
// [EventReviewDecided] event that names them. Without it, the name is the
// process's user's.
func WithReviewer(name string) Option {
	return func(c *config) { c.reviewer = name }
}

// processUser names the user the process runs as: the login name, else
// $USER, else the user id.
func processUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return cmp.Or(os.Getenv("USER"), fmt.Sprintf("uid %d", os.Getuid()))
}

// decisionEvents are the events of the decisions of c that a start or a
// resume goes on with: those of the reviews not done (done holds the tasks
// done), in task order. They are journaled when the run begins, once its
// checks let it go on: a start or a resume refused records no decision.
func decisionEvents(c config, done map[string]any) ([]store.Event, error) {
	by := c.reviewer
	if by == "" {
		by = processUser()
	}
	var events []store.Event
	for _, id := range slices.Sorted(maps.Keys(c.reviews)) {
		if _, ok := done[id]; ok {
			continue
		}
		d := c.reviews[id]
		data, err := json.Marshal(ReviewDecision{By: by, Approved: d.Approved, Comment: d.Comment})
		if err != nil {
			return nil, fmt.Errorf("durable: the review decision of %s: %w", id, err)
		}
		events = append(events, store.Event{Kind: string(EventReviewDecided), TaskID: id, Data: data})
	}
	return events, nil
}
