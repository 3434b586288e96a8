package durable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/store"
)

// ErrUnknownStatus: a status no run is shown with ([ParseStatus]).
var ErrUnknownStatus = errors.New("unknown status")

// shownStatuses are the statuses a run is shown with, in the order the
// inspection commands name them.
var shownStatuses = []Status{
	StatusRunning, StatusInterrupted, StatusCompleted, StatusFailed,
	StatusWaiting, StatusReplanRequired, StatusCancelled,
}

// ShownStatuses returns the statuses a run is shown with ([Run.Shown]):
// running, interrupted, completed, failed, waiting, replan_required and
// cancelled, in that order.
func ShownStatuses() []Status { return slices.Clone(shownStatuses) }

// EndedStatuses returns the statuses of a run whose process ended it —
// completed, failed, waiting, replan_required and cancelled — in the order
// of [ShownStatuses].
func EndedStatuses() []Status { return slices.Clone(shownStatuses[2:]) }

// ParseStatus returns the status named s, one of [ShownStatuses]; any
// other is an error that lists them, [ErrUnknownStatus].
func ParseStatus(s string) (Status, error) {
	if !slices.Contains(shownStatuses, Status(s)) {
		names := make([]string, len(shownStatuses))
		for i, st := range shownStatuses {
			names[i] = string(st)
		}
		return "", fmt.Errorf("%w %q; use one of %s", ErrUnknownStatus, s, strings.Join(names, ", "))
	}
	return Status(s), nil
}

// Owner is the process that owns a run, as this package's documents show
// it: a [store.Owner] without its lease's token.
type Owner struct {
	PID       int       `json:"pid"`
	Host      string    `json:"host"`
	Started   time.Time `json:"started"`
	Heartbeat time.Time `json:"heartbeat"`
}

func ownerOf(o *store.Owner) *Owner {
	if o == nil {
		return nil
	}
	return &Owner{PID: o.PID, Host: o.Host, Started: o.Started, Heartbeat: o.Heartbeat}
}

// shown is how a run the journal holds with status st, owned by o, is
// shown: a running run whose owner is not alive — its process died — is
// interrupted.
func shown(st Status, o *store.Owner) (Status, bool) {
	live := o != nil && Alive(*o, DefaultStaleAfter)
	if st == StatusRunning && !live {
		return StatusInterrupted, false
	}
	return st, live
}

// Shown returns the status r is shown with — its Status, except that a
// run the journal holds as running is [StatusInterrupted] when no live
// process owns it ([Alive]) — and whether a live process owns it. It asks
// the system whether the owner lives at each call: the answer is of now,
// not of when r was loaded.
func (r *Run) Shown() (status Status, live bool) { return shown(r.Status, r.Record.Owner) }

// Summary is a run as a list of runs shows it. Its JSON form is an
// element of the "runs" of dagent runs --format json.
type Summary struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	// Updated is when the run last changed status, or committed a task or
	// a plan version.
	Updated time.Time `json:"updated"`
	// Status is the status shown ([Run.Shown]): interrupted for a run the
	// journal holds as running whose process died.
	Status Status `json:"-"`
	// Journaled is the status the journal holds: running for an
	// interrupted run too. It is the JSON form's "status".
	Journaled Status `json:"status"`
	// Live says a live process owns the run: Owner, when it is [Alive].
	Live  bool   `json:"live"`
	Owner *Owner `json:"owner"`
	// Done counts the tasks done in their latest state, Total the tasks
	// of the run's latest plan (0 when it has none).
	Done  int `json:"done"`
	Total int `json:"total"`
	// Mission is the run's mission, "" for a run given a plan.
	Mission string `json:"mission"`
	// PlanHash names the run's latest plan: the first 12 hex digits of
	// its sha256.
	PlanHash string `json:"plan_hash"`
}

// Query selects runs for [List]. Its zero value selects every run.
type Query struct {
	// Statuses keeps the runs shown with one of these statuses (see
	// [ShownStatuses]); none: every run.
	Statuses []Status
	// Limit is how many runs to return at most (0: all of them), Offset
	// how many of those selected, newest first, to skip before them.
	// Neither may be negative.
	Limit, Offset int
}

// Page is a page of the runs a [Query] selects.
type Page struct {
	// Runs are the page's runs, newest first; empty, never nil, when the
	// page has none.
	Runs []Summary
	// Total counts every run the query selects, on any page.
	Total int
}

// List returns the page of the runs of s that q selects, newest first. The
// store pages the runs ([store.Store.Runs]): a page reads the summaries of
// its own runs only, however many the journal holds. Whether a running run
// is shown running or interrupted depends on whether its owner lives,
// which only this process can tell: a query that keeps one of the two but
// not the other first reads the journal's running runs to tell them
// apart. An unknown status in q is an error, [ErrUnknownStatus].
func List(ctx context.Context, s store.Store, q Query) (*Page, error) {
	return list(ctx, s, store.RunQuery{Limit: q.Limit, Offset: q.Offset}, q.Statuses)
}

// list returns the page of the runs rq selects that are shown with one
// of statuses (none: any).
func list(ctx context.Context, s store.Store, rq store.RunQuery, statuses []Status) (*Page, error) {
	want := map[Status]bool{}
	for _, st := range statuses {
		if _, err := ParseStatus(string(st)); err != nil {
			return nil, err
		}
		want[st] = true
		journaled := string(st)
		if st == StatusInterrupted {
			journaled = store.StatusRunning
		}
		if !slices.Contains(rq.Statuses, journaled) {
			rq.Statuses = append(rq.Statuses, journaled)
		}
	}
	type liveness struct {
		status Status
		live   bool
	}
	decided := map[string]liveness{}
	if want[StatusRunning] != want[StatusInterrupted] {
		all := rq
		all.Statuses, all.Limit, all.Offset = []string{store.StatusRunning}, 0, 0
		running, _, err := s.Runs(ctx, all)
		if err != nil {
			return nil, err
		}
		for _, r := range running {
			st, live := shown(Status(r.Status), r.Owner)
			if !want[st] {
				rq.Exclude = append(rq.Exclude, r.ID)
				continue
			}
			// Decided once: an owner that dies meanwhile does not move
			// its run out of the page.
			decided[r.ID] = liveness{st, live}
		}
	}
	runs, total, err := s.Runs(ctx, rq)
	if err != nil {
		return nil, err
	}
	page := &Page{Runs: make([]Summary, 0, len(runs)), Total: total}
	for _, r := range runs {
		l, ok := decided[r.ID]
		if !ok {
			l.status, l.live = shown(Status(r.Status), r.Owner)
		}
		if len(want) > 0 && !want[l.status] {
			// Started or resumed between the two reads.
			page.Total--
			continue
		}
		page.Runs = append(page.Runs, Summary{
			ID: r.ID, Created: r.Created, Updated: r.Updated, Status: l.status, Journaled: Status(r.Status), Live: l.live,
			Owner: ownerOf(r.Owner), Done: r.Done, Total: r.Total, Mission: r.Mission, PlanHash: r.PlanHash,
		})
	}
	return page, nil
}
