package runner

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seqs is an observer that keeps the Seq of every event, optionally
// slowly.
type seqs struct {
	mu   sync.Mutex
	got  []int
	slow time.Duration
}

func (s *seqs) Observe(e Event) {
	time.Sleep(s.slow)
	s.mu.Lock()
	s.got = append(s.got, e.Seq)
	s.mu.Unlock()
}

func (s *seqs) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

func TestBusDeliversEveryEventInOrderAtEachObserversPace(t *testing.T) {
	const emitters, each = 8, 200
	fast, slow := &seqs{}, &seqs{slow: 50 * time.Microsecond}
	b := newBus([]Observer{fast, slow})
	var wg sync.WaitGroup
	for range emitters {
		wg.Go(func() {
			for range each {
				b.emit(Event{Kind: EventTaskStarted})
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(b.close()...))
	want := make([]int, emitters*each)
	for i := range want {
		want[i] = i + 1
	}
	assert.Equal(t, want, fast.got)
	assert.Equal(t, want, slow.got)
}

func TestBusLogStartsOverOnceEveryObserverSawIt(t *testing.T) {
	one, two := &seqs{}, &seqs{}
	b := newBus([]Observer{one, two})
	for n := 1; n <= 100; n++ {
		b.emit(Event{Kind: EventTaskStarted, Output: make([]byte, 1<<10)})
		require.Eventually(t, func() bool { return one.count() == n && two.count() == n }, 5*time.Second, 10*time.Microsecond)
		require.Eventually(t, func() bool {
			b.mu.Lock()
			defer b.mu.Unlock()
			return len(b.log) == 0
		}, 5*time.Second, 10*time.Microsecond, "the log is dropped once seen")
		b.mu.Lock()
		assert.Equal(t, n, b.base)
		// What the events held is let go with them.
		for _, e := range b.log[:cap(b.log)] {
			assert.Nil(t, e.Output)
		}
		b.mu.Unlock()
	}
	require.NoError(t, errors.Join(b.close()...))
	assert.Equal(t, 100, one.got[99])
}
