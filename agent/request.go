package agent

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"slices"
)

// writeRequest writes req to w as jsonv.Marshal(req) would, byte for byte,
// without holding the whole document: the outputs of the dependencies,
// the inputs and the refs are written value by value, so that a request
// carrying large outputs costs its largest leaf in memory, not its size.
func writeRequest(w io.Writer, req *Request) error {
	e := &reqWriter{w: bufio.NewWriterSize(w, 64<<10)}
	e.enc = json.NewEncoder(leafWriter{e.w})
	e.enc.SetEscapeHTML(false)
	e.w.WriteByte('{')
	e.field("run_id", req.RunID)
	e.field("task_id", req.TaskID)
	e.field("agent", req.Agent)
	e.field("input", req.Input)
	if req.Template != "" {
		e.field("template", req.Template)
	}
	if len(req.Refs) > 0 {
		e.field("refs", req.Refs)
	}
	e.field("attempt", req.Attempt)
	if req.Diagnosis != "" {
		e.field("diagnosis", req.Diagnosis)
	}
	if req.Failure != "" {
		e.field("failure", req.Failure)
	}
	e.field("depends", req.Depends)
	if len(req.Skipped) > 0 {
		e.field("skipped", req.Skipped)
	}
	if len(req.Inputs) > 0 {
		e.field("inputs", req.Inputs)
	}
	if len(req.Params) > 0 {
		e.field("params", req.Params)
	}
	if len(req.OutputSchema) > 0 {
		e.field("output_schema", req.OutputSchema)
	}
	e.field("idempotency_key", req.IdempotencyKey)
	e.w.WriteByte('}')
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

// maxStreamDepth is how deep writeRequest walks maps and slices itself;
// deeper values are encoded whole, as encoding/json does, which also
// refuses cycles.
const maxStreamDepth = 64

type reqWriter struct {
	w     *bufio.Writer
	enc   *json.Encoder
	comma bool
	err   error
}

func (e *reqWriter) field(name string, v any) {
	if e.comma {
		e.w.WriteByte(',')
	}
	e.comma = true
	e.w.WriteByte('"')
	e.w.WriteString(name)
	e.w.WriteString(`":`)
	e.value(v, 0)
}

// value writes v as encoding/json does, maps with their keys sorted.
func (e *reqWriter) value(v any, depth int) {
	if e.err != nil {
		return
	}
	switch c := v.(type) {
	case map[string]any:
		if c == nil || depth >= maxStreamDepth {
			break
		}
		e.w.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(c)) {
			if i > 0 {
				e.w.WriteByte(',')
			}
			e.leaf(k)
			e.w.WriteByte(':')
			e.value(c[k], depth+1)
		}
		e.w.WriteByte('}')
		return
	case []any:
		if c == nil || depth >= maxStreamDepth {
			break
		}
		e.w.WriteByte('[')
		for i, x := range c {
			if i > 0 {
				e.w.WriteByte(',')
			}
			e.value(x, depth+1)
		}
		e.w.WriteByte(']')
		return
	}
	e.leaf(v)
}

func (e *reqWriter) leaf(v any) {
	if e.err == nil {
		e.err = e.enc.Encode(v)
	}
}

// leafWriter drops the newline json.Encoder ends each value with: compact
// JSON holds no other raw newline.
type leafWriter struct{ w *bufio.Writer }

func (l leafWriter) Write(p []byte) (int, error) {
	n := len(p)
	if n > 0 && p[n-1] == '\n' {
		p = p[:n-1]
	}
	_, err := l.w.Write(p)
	return n, err
}
