package temporal

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
)

func TestAttemptRequestWire(t *testing.T) {
	tests := []struct {
		name string
		req  agent.Request
		// want is the request's JSON on the wire.
		want string
	}{
		{
			name: "first attempt without dependencies",
			req:  agent.Request{RunID: "r", TaskID: "a", Agent: "w", Attempt: 1, Depends: map[string]any{}, IdempotencyKey: "r/a/1"},
			want: `{"run_id":"r","task_id":"a","agent":"w","attempt":1}`,
		},
		{
			name: "retry with dependencies and input",
			req: agent.Request{RunID: "r", TaskID: "b", Agent: "w", Input: "go", Attempt: 2, Diagnosis: "bad", Failure: agent.FailureError,
				Depends: map[string]any{"a": json.Number("1.50")}, IdempotencyKey: "r/b/2"},
			want: `{"run_id":"r","task_id":"b","agent":"w","input":"go","attempt":2,"diagnosis":"bad","failure":"error","depends":{"a":1.50}}`,
		},
		{
			name: "a key of its own is kept",
			req:  agent.Request{RunID: "r", TaskID: "a", Agent: "w", Attempt: 1, Depends: map[string]any{}, IdempotencyKey: "other"},
			want: `{"run_id":"r","task_id":"a","agent":"w","attempt":1,"idempotency_key":"other"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := AttemptRequest{Request: tt.req, Timeout: time.Second}
			data, err := json.Marshal(in)
			require.NoError(t, err)
			var wire struct {
				Request json.RawMessage `json:"request"`
			}
			require.NoError(t, json.Unmarshal(data, &wire))
			assert.JSONEq(t, tt.want, string(wire.Request))
			var back AttemptRequest
			require.NoError(t, json.Unmarshal(data, &back))
			assert.Equal(t, in, back)
		})
	}
}

func TestAttemptReplyLeavesOutZeroUsage(t *testing.T) {
	data, err := json.Marshal(AttemptReply{Output: json.RawMessage(`{"id":"a"}`)})
	require.NoError(t, err)
	assert.JSONEq(t, `{"output":{"id":"a"}}`, string(data))
	data, err = json.Marshal(AttemptReply{Usage: agent.Usage{PromptTokens: 3}, Failure: &Failure{Class: "error", Message: "m"}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"usage":{"prompt_tokens":3,"completion_tokens":0},"failure":{"class":"error","message":"m"}}`, string(data))
}
