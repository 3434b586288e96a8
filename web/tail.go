package web

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// The server's Observer learns of runs from the journal, as its live pages
// do: other processes run them, and the journal is all they share. A tail
// reads, at each read, the events appended since the last to the runs that
// may have new ones — those that changed since the last read, which
// include a run that began and ended between two reads, and those under
// way — and gives them to the Observer.
//
// A read costs a pass over the journal's runs (the store's
// RunQuery.UpdatedAfter), about 6ms for 10,000 runs: the tail reads every
// tailEvery, not every Poll, as the metrics it feeds are scraped every
// fifteen seconds or so.

// tailEvery is how often the tail reads the journal, unless Poll is
// longer.
const tailEvery = time.Second

// tailSlack is how long before its last read the tail asks for the runs
// that changed: a change is stamped by its writer as it is made, and may
// be committed after a read that began later than the stamp.
const tailSlack = 2 * time.Second

// tailForget is how long a run that is not under way stays known to the
// tail after it was last listed: the tail forgets it then, so that what
// it keeps does not grow with every run the server sees. It is far longer
// than a read, and than an event takes to be journaled.
const tailForget = time.Minute

// tail gives the events journaled after since to obs, each once, in order
// within each run.
type tail struct {
	s     store.Store
	obs   runner.Observer
	since time.Time
	// read is when the last read that went through began; zero before the
	// first.
	read time.Time
	// seen are the runs the tail knows, by id; a run it has not read yet,
	// or has forgotten, is absent.
	seen map[string]seenRun
	// forgot is when the tail last forgot a run.
	forgot time.Time
	// active are the runs under way at the last read: those the journal
	// holds as running, and those a process owns — a run that replans is
	// replan_required between its runs. Their events are read at each
	// read, whether they changed or not: a task that starts changes no
	// run.
	active map[string]bool
}

// seenRun is what the tail knows of a run.
type seenRun struct {
	seq    int       // of the last event read
	listed time.Time // when the read that last listed it began
}

func newTail(s store.Store, obs runner.Observer, since time.Time) *tail {
	return &tail{s: s, obs: obs, since: since, seen: map[string]seenRun{}, active: map[string]bool{}}
}

// follow reads the journal every every until ctx ends. A read that fails —
// the database busy, say — is made again at the next one: nothing is lost,
// as the tail reads after the last event it gave.
func (t *tail) follow(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		_ = t.next(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// next reads once what the runs got since the last read, and gives it to
// the observer.
func (t *tail) next(ctx context.Context) error {
	began := time.Now()
	var under store.RunQuery
	if t.read.IsZero() {
		under.Statuses = []string{store.StatusRunning}
	} else if len(t.active) > 0 {
		under.IDs = slices.Sorted(maps.Keys(t.active))
	}
	var runs []store.Summary
	if under.Statuses != nil || under.IDs != nil {
		var err error
		if runs, _, err = t.s.Runs(ctx, under); err != nil {
			return err
		}
	}
	from := t.read
	if from.IsZero() {
		from = t.since
	}
	changed, _, err := t.s.Runs(ctx, store.RunQuery{UpdatedAfter: from.Add(-tailSlack)})
	if err != nil {
		return err
	}
	// A run listed twice is read once.
	byID := map[string]store.Summary{}
	for _, sum := range slices.Concat(runs, changed) {
		byID[sum.ID] = sum
	}
	active := map[string]bool{}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		if err := t.readRun(ctx, id, began); errors.Is(err, store.ErrNotFound) {
			// Deleted since it was listed.
			delete(t.seen, id)
			continue
		} else if err != nil {
			return err
		}
		if sum := byID[id]; sum.Status == store.StatusRunning || sum.Owner != nil {
			active[id] = true
		}
	}
	for id, r := range t.seen {
		if !active[id] && began.Sub(r.listed) > tailForget {
			delete(t.seen, id)
			t.forgot = began
		}
	}
	t.active, t.read = active, began
	return nil
}

// readRun gives the observer what run id, listed by the read that began
// at now, got since the tail last read it.
func (t *tail) readRun(ctx context.Context, id string, now time.Time) error {
	r, known := t.seen[id]
	events, err := t.s.EventsAfter(ctx, id, r.seq)
	if err != nil {
		return err
	}
	fed := events
	if !known {
		// A run read for the first time may have begun before the tail:
		// what happened before is not the server's to observe. A run
		// the tail forgot had been still for tailForget when it did: what
		// happened that long before is what it read then.
		cut := t.since
		if f := t.forgot.Add(-tailForget); f.After(cut) {
			cut = f
		}
		i := slices.IndexFunc(events, func(e store.Event) bool { return !e.Time.Before(cut) })
		if i < 0 {
			i = len(events)
		}
		fed = events[i:]
	}
	for _, e := range fed {
		t.give(id, e)
	}
	if n := len(events); n > 0 {
		r.seq = events[n-1].Seq
	}
	r.listed = now
	t.seen[id] = r
	return nil
}

// give gives e, an event of run id, to the observer as the runner's event
// it was journaled from. An event whose data cannot be read is not given:
// the journal has nothing more to say of it.
func (t *tail) give(id string, e store.Event) {
	ev, err := e.Runner(id)
	if err != nil {
		return
	}
	t.obs.Observe(ev)
}
