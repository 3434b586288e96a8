package durable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dagent-dev/dagent/store"
)

// DefaultStaleAfter is how long the owner of a run on another host may go
// without a heartbeat before it is taken for dead. An owner beats every
// third of it.
const DefaultStaleAfter = 30 * time.Second

// ErrLeaseLost: another process took the run over ([WithTakeover]) while
// this one ran it; this one stopped.
var ErrLeaseLost = errors.New("the run was taken over by another process")

// ErrCancelRequested: another process cancelled the run ([Cancel]) while
// this one ran it; this one stopped it as its context ending would.
var ErrCancelRequested = errors.New("the run was cancelled by another process")

// held holds the ids of the leases this process holds, so that an owner
// with this process's id is known alive or dead for sure: a lease of a
// process that had the same id before it — a container restarted — is
// dead.
var held sync.Map

var hostname = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	return h
})

// Alive reports whether o, the owner of a run, is alive: on this host,
// whether its process runs (for this process, whether it still holds the
// lease); on another host, whether its heartbeat is fresher than
// staleAfter.
func Alive(o store.Owner, staleAfter time.Duration) bool {
	if o.Host == hostname() {
		if o.PID == os.Getpid() {
			_, ok := held.Load(o.ID)
			return ok
		}
		return o.PID > 0 && processAlive(o.PID)
	}
	return time.Since(o.Heartbeat) < staleAfter
}

// lease is this process's lease on a run, kept fresh while the run runs.
type lease struct {
	s     store.Store
	runID string
	owner store.Owner
	every time.Duration
	lost  atomic.Bool

	stop, done chan struct{}
	once       sync.Once
}

// takeLease makes this process the owner of run id in s. It refuses an
// owner that is alive, unless c takes the run over.
func takeLease(ctx context.Context, s store.Store, id string, c config) (*lease, error) {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails
	stale := c.staleAfter
	if stale <= 0 {
		stale = DefaultStaleAfter
	}
	l := &lease{s: s, runID: id, every: max(stale/3, time.Millisecond),
		owner: store.Owner{ID: hex.EncodeToString(b[:]), PID: os.Getpid(), Host: hostname(), Started: time.Now()}}
	// Known held before it is: a concurrent acquisition in this process
	// sees this owner alive as soon as the store holds it.
	held.Store(l.owner.ID, struct{}{})
	err := s.Acquire(ctx, id, l.owner, func(o store.Owner) bool { return c.takeover || !Alive(o, stale) })
	if err != nil {
		held.Delete(l.owner.ID)
		var owned *store.OwnedError
		if errors.As(err, &owned) {
			return nil, owned
		}
		return nil, err
	}
	return l, nil
}

// cancelPoll is how often the owner of a run asks the store whether
// another process asked it to cancel the run ([Cancel]): a read, cheap
// beside the heartbeat's write.
const cancelPoll = 200 * time.Millisecond

// beat keeps the lease fresh until release; when another process took the
// run over, it calls stop with [ErrLeaseLost], and when another process
// asked for the run to be cancelled, with [ErrCancelRequested], once.
func (l *lease) beat(stop context.CancelCauseFunc) {
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(l.done)
		t := time.NewTicker(l.every)
		defer t.Stop()
		poll := time.NewTicker(min(cancelPoll, l.every))
		defer poll.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-poll.C:
				// A run cancelled goes on to its end — its tasks in
				// flight end — keeping its lease fresh meanwhile.
				if req, err := l.s.CancelRequested(context.Background(), l.runID, l.owner); err == nil && req {
					poll.Stop()
					// Also context.Canceled: the run ends cancelled, as
					// its context ending would make it.
					stop(fmt.Errorf("%w: %w", ErrCancelRequested, context.Canceled))
				}
				continue
			case <-t.C:
			}
			// Another error (the database busy past its timeout) is
			// tried again at the next beat: the lease goes stale only
			// after several.
			if err := l.s.Heartbeat(context.Background(), l.runID, l.owner); errors.Is(err, store.ErrNotOwner) {
				l.lost.Store(true)
				stop(fmt.Errorf("run %s: %w", l.runID, ErrLeaseLost))
				return
			}
		}
	}()
}

// check fails with [ErrLeaseLost] once the run was taken over.
func (l *lease) check() error {
	if l != nil && l.lost.Load() {
		return fmt.Errorf("run %s: %w", l.runID, ErrLeaseLost)
	}
	return nil
}

// release gives the lease up, once.
func (l *lease) release(ctx context.Context) error {
	var err error
	l.once.Do(func() {
		if l.stop != nil {
			close(l.stop)
			<-l.done
		}
		err = l.s.Release(context.WithoutCancel(ctx), l.runID, l.owner)
		held.Delete(l.owner.ID)
	})
	return err
}
