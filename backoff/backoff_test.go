package backoff_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/dagent-dev/dagent/backoff"
)

func TestDelay(t *testing.T) {
	exp := backoff.Policy{Initial: time.Second, Coefficient: 2, Max: 100 * time.Second}
	tests := []struct {
		name string
		p    backoff.Policy
		n    int
		want time.Duration
	}{
		{"zero policy", backoff.Policy{}, 3, 0},
		{"retry 0", exp, 0, 0},
		{"negative retry", exp, -1, 0},
		{"first", exp, 1, time.Second},
		{"second", exp, 2, 2 * time.Second},
		{"fifth", exp, 5, 16 * time.Second},
		{"capped", exp, 8, 100 * time.Second},
		{"far beyond the cap", exp, 10_000, 100 * time.Second},
		{"coefficient below 1 is constant", backoff.Policy{Initial: time.Second, Coefficient: 0.5}, 4, time.Second},
		{"zero coefficient is constant", backoff.Policy{Initial: time.Second}, 9, time.Second},
		{"no cap", backoff.Policy{Initial: time.Millisecond, Coefficient: 10}, 4, time.Second},
		{"no overflow", backoff.Policy{Initial: time.Hour, Coefficient: 10}, 1000, time.Duration(float64(math.MaxInt64 / 2))},
		{"negative initial", backoff.Policy{Initial: -time.Second, Coefficient: 2}, 2, 0},
		{"negative jitter is none", backoff.Policy{Initial: time.Second, Jitter: -1}, 1, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.p.Delay(tt.n))
		})
	}
}

func TestDelayJitter(t *testing.T) {
	tests := []struct {
		name     string
		jitter   float64
		min, max time.Duration
	}{
		{"a fifth", 0.2, 800 * time.Millisecond, time.Second},
		{"half, as the llm package waits", 0.5, 500 * time.Millisecond, time.Second},
		{"all", 1, 0, time.Second},
		{"over 1 counts as 1", 7, 0, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := backoff.Policy{Initial: time.Second, Jitter: tt.jitter}
			seen := map[time.Duration]bool{}
			for range 200 {
				d := p.Delay(1)
				assert.GreaterOrEqual(t, d, tt.min)
				assert.LessOrEqual(t, d, tt.max)
				seen[d] = true
			}
			assert.Greater(t, len(seen), 1, "the wait varies")
		})
	}
}

func TestDelayAt(t *testing.T) {
	p := backoff.Policy{Initial: time.Second, Coefficient: 2, Jitter: 0.5}
	tests := []struct {
		name string
		n    int
		u    float64
		want time.Duration
	}{
		{"no jitter drawn", 1, 0, time.Second},
		{"half the jitter", 1, 0.5, 750 * time.Millisecond},
		{"second retry", 2, 0.5, 1500 * time.Millisecond},
		{"below 0 counts as 0", 1, -3, time.Second},
		{"1 and over count as 1", 1, 9, 500 * time.Millisecond},
		{"retry 0", 0, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, p.DelayAt(tt.n, tt.u))
			assert.Equal(t, tt.want, p.DelayAt(tt.n, tt.u), "the same arguments give the same wait")
		})
	}
}

func ExamplePolicy_DelayAt() {
	p := backoff.Policy{Initial: time.Second, Coefficient: 2, Jitter: 0.5}
	fmt.Println(p.DelayAt(1, 0), p.DelayAt(2, 0.5), p.DelayAt(3, 1))
	// Output: 1s 1.5s 2s
}

func ExamplePolicy_Delay() {
	p := backoff.Policy{Initial: time.Second, Coefficient: 2, Max: 5 * time.Second}
	for n := 1; n <= 4; n++ {
		fmt.Println(p.Delay(n))
	}
	// Output:
	// 1s
	// 2s
	// 4s
	// 5s
}
