package plan

import (
	"iter"
	"strings"
)

// resultRef is a {{results.ID}} or {{results.ID.path}} template in a task's
// input: the output of an upstream task, or one value of it.
type resultRef struct {
	start, end int    // byte range of the whole template in the input
	task       string // the task it names; empty when it names none
}

// resultRefs iterates over the {{results...}} templates in s; other {{...}}
// text is left alone. Ids may contain dots ("1.2"), so the longest prefix of
// the reference that isTask accepts is the task; the rest is the path.
func resultRefs(s string, isTask func(string) bool) iter.Seq[resultRef] {
	return func(yield func(resultRef) bool) {
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
			ref := resultRef{start: start, end: end}
			ref.task, _ = splitRef(strings.TrimPrefix(rest, "."), isTask)
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
