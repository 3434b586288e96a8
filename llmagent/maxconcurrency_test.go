package llmagent

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/registry"
)

// A tool's MaxConcurrency bounds the calls of one turn, which otherwise
// run at once (see TestLLMToolsConcurrent), and the calls of agents
// running side by side.
func TestLLMToolMaxConcurrency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		limit  int
		agents int
		want   int32
	}{
		{"one at a time in a turn", 1, 1, 1},
		{"two at a time in a turn", 2, 1, 2},
		{"one at a time across agents", 1, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := registry.New()
			var running, peak, calls atomic.Int32
			require.NoError(t, reg.RegisterTool("site", registry.Tool{MaxConcurrency: tt.limit, Run: func(ctx context.Context, _ json.RawMessage) (string, error) {
				n := running.Add(1)
				defer running.Add(-1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				calls.Add(1)
				time.Sleep(10 * time.Millisecond)
				return "ok", nil
			}}))
			done := make(chan error, tt.agents)
			for range tt.agents {
				c := newFake(call(u1, tc("a", "site", `{}`), tc("b", "site", `{}`), tc("c", "site", `{}`)), say("done", u1))
				go func() {
					_, err := (&Agent{Client: c, Tools: []string{"site"}, Registry: reg}).Run(context.Background(), agent.Request{})
					done <- err
				}()
			}
			for range tt.agents {
				require.NoError(t, <-done)
			}
			assert.Equal(t, int32(3*tt.agents), calls.Load())
			assert.LessOrEqual(t, peak.Load(), tt.want, "never more calls at once than the bound")
		})
	}
}
