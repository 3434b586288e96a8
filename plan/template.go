package plan

import (
	"iter"
	"strings"
)

// ResultRef is a {{results.ID}} or {{results.ID.path}} template in a task's
// input: the output of an upstream task, or one value of it.
type ResultRef struct {
	// Start and End are the byte range of the whole template in the input.
	Start, End int
	// Task is the id of the task it names; empty when it names none.
	Task string
	// Path is the dotted path into the task's output; empty for the whole
	// output.
	Path string
}

// ResultRefs iterates over the {{results...}} templates in s; other {{...}}
// text is left alone. Ids may contain dots ("1.2"), so the longest prefix of
// the reference that isTask accepts is the task; the rest is the path.
func ResultRefs(s string, isTask func(string) bool) iter.Seq[ResultRef] {
	return func(yield func(ResultRef) bool) {
		for off := 0; ; {
			i := strings.Index(s[off:], "{{")
			if i < 0 {
				return
			}
			start := off + i
			j := strings.Index(s[start+2:], "}}")
			if j < 0 {
				return
			}
			end := start + 2 + j + 2
			off = end
			expr := strings.TrimSpace(s[start+2 : end-2])
			rest, ok := strings.CutPrefix(expr, "results")
			if !ok || rest != "" && rest[0] != '.' {
				continue
			}
			ref := ResultRef{Start: start, End: end}
			ref.Task, ref.Path = splitRef(strings.TrimPrefix(rest, "."), isTask)
			if !yield(ref) {
				return
			}
		}
	}
}

// splitRef splits "ID.path" at the longest prefix naming a task, or at the
// first dot when none does.
func splitRef(ref string, isTask func(string) bool) (task, path string) {
	for i := len(ref); i > 0; i = strings.LastIndexByte(ref[:i], '.') {
		if isTask(ref[:i]) {
			return ref[:i], strings.TrimPrefix(ref[i:], ".")
		}
	}
	task, path, _ = strings.Cut(ref, ".")
	return task, path
}
