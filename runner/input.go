package runner

import (
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/internal/jsonv"
)

// render expands the {{results.ID.path}} templates of task i's input:
// strings as they are, other values as JSON, a skipped task as "". It also
// returns each template's value by reference ("results.ID.path"), nil for
// a skipped task.
func (c *core) render(i int) (string, map[string]any, error) {
	in := c.p.Tasks[i].Input
	if !strings.Contains(in, "{{") {
		return in, nil, nil
	}
	var b strings.Builder
	var refs map[string]any
	last := 0
	for _, ref := range c.d.Refs(i) {
		j, _ := c.d.Index(ref.Task)
		b.WriteString(in[last:ref.Start])
		last = ref.End
		if refs == nil {
			refs = make(map[string]any)
		}
		key := strings.TrimSpace(in[ref.Start+2 : ref.End-2])
		if c.state[j].res.Status != TaskDone {
			refs[key] = nil
			continue
		}
		v, ok := jsonv.Lookup(c.state[j].res.Output, ref.Path)
		if !ok {
			return "", nil, fmt.Errorf("%w: template %s: the output of %q has no %q", ErrMissingValue, in[ref.Start:ref.End], ref.Task, ref.Path)
		}
		refs[key] = v
		b.WriteString(jsonv.Text(v))
	}
	b.WriteString(in[last:])
	return b.String(), refs, nil
}

// wire resolves task i's inputs slots; slots wired from a skipped task are
// left out.
func (c *core) wire(i int) (map[string]any, error) {
	t := &c.p.Tasks[i]
	if len(t.Inputs) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(t.Inputs))
	missing := "" // the first, by name, of the inputs whose slot is missing
	for name, in := range t.Inputs {
		j, _ := c.d.Index(in.From)
		from := &c.state[j].res
		if from.Status != TaskDone {
			continue
		}
		v, ok := jsonv.Lookup(from.Output, in.Slot)
		if !ok {
			// Name the same input whatever order the map gives: the
			// diagnosis goes into a retry's request and the journal.
			if missing == "" || name < missing {
				missing = name
			}
			continue
		}
		out[name] = v
	}
	if missing != "" {
		in := t.Inputs[missing]
		return nil, fmt.Errorf("%w: input %q: the output of %q has no slot %q", ErrMissingValue, missing, in.From, in.Slot)
	}
	return out, nil
}

// gateCheck fails a synthesis gate's output that says nothing: empty,
// whitespace, {} or [], or under 10 bytes.
func gateCheck(output any) string {
	s := strings.TrimSpace(jsonv.Text(output))
	switch {
	case s == "" || s == "{}" || s == "[]" || s == "null" || s == `""`:
		return "the synthesis gate's output is empty"
	case len(s) < 10:
		return fmt.Sprintf("the synthesis gate's output is too short (%d bytes, at least 10 needed)", len(s))
	}
	return ""
}
