package registry_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/registry"
)

func TestWorkerCheckOutput(t *testing.T) {
	r := registry.New()
	require.NoError(t, r.Register("slots", registry.Worker{Agent: agent.Func(nil), Outputs: []string{"files", "count"}}))
	require.NoError(t, r.Register("free", registry.Worker{Agent: agent.Func(nil)}))
	slots, _ := r.Lookup("slots")
	free, _ := r.Lookup("free")
	const prefix = `invalid output: worker "slots" declares outputs files, count and must print one JSON object on standard output; it printed `
	long := strings.Repeat("é", 150) // 300 bytes, cut inside no character
	tests := []struct {
		name   string
		worker registry.Worker
		output any
		want   string // after prefix; "" for no error
	}{
		{"object", slots, map[string]any{"files": []any{}}, ""},
		{"empty object", slots, map[string]any{}, ""},
		{"text", slots, "a plain summary", `text: "a plain summary"`},
		{"nothing", slots, "", "nothing"},
		{"null", slots, nil, "null"},
		{"number", slots, json.Number("42"), `a JSON number: "42"`},
		{"boolean", slots, true, "a JSON boolean: true"},
		{"array", slots, []any{"a", json.Number("1")}, `a JSON array: "[\"a\",1]"`},
		{"control characters", slots, "line\n\x1b[31mred\x00", `text: "line\n\x1b[31mred\x00"`},
		{"long text", slots, long, `text: "` + strings.Repeat("é", 100) + `"… (300 bytes in all)`},
		{"no slots declared", free, "anything", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.worker.CheckOutput(tt.output)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, agent.ErrInvalidOutput)
			assert.Equal(t, prefix+tt.want, err.Error())
		})
	}
}
