package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/internal/jsonv"
)

func TestWriteRequestIsMarshal(t *testing.T) {
	deep := any("bottom")
	for range maxStreamDepth + 3 {
		deep = map[string]any{"d": []any{deep}}
	}
	full := Request{
		RunID: "r<1>", TaskID: "t&1", Agent: "a", Input: "in \u2028 \"q\" \n é 日本",
		Template: "{{results.a}}", Refs: map[string]any{"results.a": []any{1.5, json.Number("12345678901234567890"), nil, true}},
		Attempt: 2, Diagnosis: "bad <b>", Failure: FailureVerification,
		Depends:        map[string]any{"z": "last", "a": map[string]any{"b": map[string]any{}, "c": []any{}, "n": nil}, "deep": deep, "m": map[string]any(nil), "s": []any(nil)},
		Skipped:        []string{"x", "y"},
		Inputs:         map[string]any{"slot": int64(-3), "i": 7},
		Params:         map[string]any{"struct": struct{ A int }{1}, "bytes": []byte("hi")},
		OutputSchema:   json.RawMessage(`{ "type" : "object" }`),
		IdempotencyKey: "r/t/2",
	}
	// A field added to Request must be written too: every field is set.
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		require.False(t, v.Field(i).IsZero(), "field %s is not set in the test", v.Type().Field(i).Name)
	}
	for name, req := range map[string]Request{
		"zero":  {},
		"empty": {Depends: map[string]any{}, Refs: map[string]any{}, Inputs: map[string]any{}, Skipped: []string{}},
		"full":  full,
	} {
		t.Run(name, func(t *testing.T) {
			want, err := jsonv.Marshal(req)
			require.NoError(t, err)
			var got bytes.Buffer
			require.NoError(t, writeRequest(&got, &req))
			assert.Equal(t, string(want), got.String())
		})
	}
}

func TestWriteRequestError(t *testing.T) {
	req := Request{Depends: map[string]any{"a": math.NaN()}}
	_, want := jsonv.Marshal(req)
	require.Error(t, want)
	err := writeRequest(&bytes.Buffer{}, &req)
	var uv *json.UnsupportedValueError
	assert.ErrorAs(t, err, &uv)
}

func TestCommandEncodeError(t *testing.T) {
	t.Parallel()
	req := Request{TaskID: "t", Depends: map[string]any{"up": strings.Repeat("x", 1<<20), "z": math.Inf(1)}}
	_, err := helper(t, "echo").Run(context.Background(), req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "encode the request")
	var uv *json.UnsupportedValueError
	assert.ErrorAs(t, err, &uv)
}

// TestCommandStreamsRequest checks that a request is written to the
// program as it is encoded: the bytes held while a large request is sent
// stay far below its size.
func TestCommandStreamsRequest(t *testing.T) {
	const outputs, size = 8, 4 << 20
	depends := make(map[string]any, outputs)
	for i := range outputs {
		depends[fmt.Sprint("up", i)] = strings.Repeat("x", size)
	}
	req := Request{TaskID: "sink", Depends: depends}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := helper(t, "json").Run(context.Background(), req)
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(outputs*size/2), "allocated %d bytes to send %d", allocated, outputs*size)
}
