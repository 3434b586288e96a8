package registry

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dagent-dev/dagent/agent"
)

// outputPreview bounds how much of a refused output an error quotes: enough
// to recognise it, never the whole of a large one.
const outputPreview = 200

// CheckOutput reports whether output, an attempt's output as the runner
// holds it (JSON-shaped: objects are map[string]any), can be the output of
// the worker. A worker that declares output slots must return a JSON
// object, since the slots are its keys and its dependents read them; text
// or another JSON value fails the attempt at once rather than one of its
// dependents later. The error matches [agent.ErrInvalidOutput], names the
// worker and its slots, and quotes the start of what it returned, escaped.
// A worker that declares no slots may return anything: nil.
func (w Worker) CheckOutput(output any) error {
	if len(w.Outputs) == 0 {
		return nil
	}
	if _, ok := output.(map[string]any); ok {
		return nil
	}
	name := w.name
	if name == "" {
		name = "(unregistered)"
	}
	return fmt.Errorf("%w: worker %q declares outputs %s and must print one JSON object on standard output; it printed %s",
		agent.ErrInvalidOutput, name, strings.Join(w.Outputs, ", "), describeOutput(output))
}

// describeOutput says what kind of value v is and quotes its start.
func describeOutput(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if strings.TrimSpace(v) == "" {
			return "nothing"
		}
		return "text: " + preview(v)
	case bool:
		return "a JSON boolean: " + strconv.FormatBool(v)
	case json.Number:
		return "a JSON number: " + preview(v.String())
	case []any:
		return "a JSON array: " + preview(encodePreview(v))
	}
	return "a JSON value: " + preview(encodePreview(v))
}

// preview quotes s, escaping control characters and invalid UTF-8, cut at
// outputPreview bytes on a character boundary, with the size when cut.
func preview(s string) string {
	if len(s) <= outputPreview {
		return strconv.Quote(s)
	}
	cut := outputPreview
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", strconv.Quote(s[:cut]), len(s))
}

// encodePreview encodes v as JSON to be previewed. Its size is bounded by
// what the worker could write on standard output.
func encodePreview(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("(%T)", v)
	}
	return string(b)
}
