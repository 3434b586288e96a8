package runner_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/dagent-dev/dagent/runner"
)

func TestBackoffDelay(t *testing.T) {
	cases := []struct {
		name string
		b    runner.Backoff
		want []time.Duration // for n = 1, 2, ...
	}{
		{"zero initial", runner.Backoff{Coefficient: 2, Max: time.Second, Jitter: 0.5}, []time.Duration{0, 0, 0}},
		{"exponential", runner.Backoff{Initial: 100 * time.Millisecond, Coefficient: 2},
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}},
		{"coefficient 3", runner.Backoff{Initial: time.Second, Coefficient: 3},
			[]time.Duration{time.Second, 3 * time.Second, 9 * time.Second}},
		{"capped", runner.Backoff{Initial: time.Second, Coefficient: 2, Max: 5 * time.Second},
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}},
		{"coefficient below 1 counts as 1", runner.Backoff{Initial: time.Second, Coefficient: 0.5},
			[]time.Duration{time.Second, time.Second, time.Second}},
		{"coefficient 0", runner.Backoff{Initial: time.Second},
			[]time.Duration{time.Second, time.Second}},
		{"max below initial", runner.Backoff{Initial: time.Second, Coefficient: 2, Max: 10 * time.Millisecond},
			[]time.Duration{10 * time.Millisecond, 10 * time.Millisecond}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, want := range c.want {
				assert.Equal(t, want, c.b.Delay(k+1), "retry %d", k+1)
			}
		})
	}
	b := runner.Backoff{Initial: time.Second, Coefficient: 2}
	assert.Zero(t, b.Delay(0), "n counts from 1")
	assert.Zero(t, b.Delay(-3))
}

// Jitter takes at most the fraction J off: d(1-J) ≤ delay ≤ d.
func TestBackoffJitter(t *testing.T) {
	b := runner.Backoff{Initial: 100 * time.Millisecond, Coefficient: 2, Max: time.Second, Jitter: 0.2}
	for n, d := range map[int]time.Duration{1: 100 * time.Millisecond, 3: 400 * time.Millisecond, 10: time.Second} {
		lo := time.Duration(float64(d) * 0.8)
		var distinct = map[time.Duration]bool{}
		for range 500 {
			got := b.Delay(n)
			assert.GreaterOrEqual(t, got, lo)
			assert.LessOrEqual(t, got, d)
			distinct[got] = true
		}
		assert.Greater(t, len(distinct), 1, "jitter varies the delay")
	}
	// Jitter is clamped to [0, 1].
	full := runner.Backoff{Initial: time.Second, Jitter: 7}
	none := runner.Backoff{Initial: time.Second, Jitter: -1}
	for range 200 {
		got := full.Delay(1)
		assert.GreaterOrEqual(t, got, time.Duration(0))
		assert.LessOrEqual(t, got, time.Second)
		assert.Equal(t, time.Second, none.Delay(1))
	}
}

// Large retry numbers neither overflow nor go negative.
func TestBackoffOverflow(t *testing.T) {
	capped := runner.Backoff{Initial: time.Second, Coefficient: 10, Max: time.Minute}
	assert.Equal(t, time.Minute, capped.Delay(1000))
	uncapped := runner.Backoff{Initial: time.Second, Coefficient: 10}
	got := uncapped.Delay(1000)
	assert.Positive(t, got)
	assert.LessOrEqual(t, int64(got), int64(math.MaxInt64))
}

func TestDefaultBackoff(t *testing.T) {
	b := runner.DefaultBackoff()
	assert.Equal(t, runner.Backoff{Initial: time.Second, Coefficient: 2, Max: 100 * time.Second, Jitter: 0.2}, b)
	d := b.Delay(8) // 128s, capped at 100s, jitter up to 20%
	assert.GreaterOrEqual(t, d, 80*time.Second)
	assert.LessOrEqual(t, d, 100*time.Second)
}
