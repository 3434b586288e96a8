package registry

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolMaxConcurrency calls a tool from many goroutines and counts the
// calls that run at once.
func TestToolMaxConcurrency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		limit int
		want  int // the most calls at once
	}{
		{"one at a time", 1, 1},
		{"two", 2, 2},
		{"unbounded", 0, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var now, most atomic.Int32
			release := make(chan struct{})
			arrived := make(chan struct{}, 8)
			run := func(ctx context.Context, _ json.RawMessage) (string, error) {
				n := now.Add(1)
				defer now.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				arrived <- struct{}{}
				<-release
				return "ok", nil
			}
			r := New()
			require.NoError(t, r.RegisterTool("t", Tool{Run: run, MaxConcurrency: tt.limit}))
			tool, ok := r.LookupTool("t")
			require.True(t, ok)
			assert.Equal(t, tt.limit, tool.MaxConcurrency)

			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					out, err := tool.Run(context.Background(), json.RawMessage(`{}`))
					assert.NoError(t, err)
					assert.Equal(t, "ok", out)
				})
			}
			for range tt.want {
				<-arrived
			}
			// No call beyond the bound starts while the others hold their places.
			select {
			case <-arrived:
				t.Fatalf("a call beyond the bound of %d started", tt.want)
			case <-time.After(20 * time.Millisecond):
			}
			close(release)
			wg.Wait()
			assert.Equal(t, int32(tt.want), most.Load())
		})
	}
}

// TestToolMaxConcurrencyWaitEnds: a call waiting for a place ends with its
// context.
func TestToolMaxConcurrencyWaitEnds(t *testing.T) {
	t.Parallel()
	release, started := make(chan struct{}), make(chan struct{})
	r := New()
	require.NoError(t, r.RegisterTool("t", Tool{MaxConcurrency: 1, Run: func(context.Context, json.RawMessage) (string, error) {
		close(started)
		<-release
		return "", nil
	}}))
	tool, _ := r.LookupTool("t")
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = tool.Run(context.Background(), nil)
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := tool.Run(ctx, nil)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, "waiting for a place: the tool runs at most 1 calls at once: context deadline exceeded")
	close(release)
	<-done
}
