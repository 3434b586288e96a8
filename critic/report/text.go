package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/prose"
)

// ANSI colours of the severities in the text format.
var severityColour = map[critic.Severity]string{
	critic.Critical: "\x1b[31m", // red
	critic.Warning:  "\x1b[33m", // yellow
	critic.Info:     "\x1b[34m", // blue
}

const colourReset = "\x1b[0m"

// errWriter remembers the first error of w, so that a long sequence of
// prints checks it once. What it prints is made [prose.Visible]: the
// reports quote plans, which must not act on the terminal; only colour
// codes go out as they are.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	e.raw(prose.Visible(fmt.Sprintf(format, args...)))
}

func (e *errWriter) raw(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}

// severity prints s padded to the width of the longest severity, in its
// colour when colour is set.
func (e *errWriter) severity(s critic.Severity, colour bool) {
	c, ok := severityColour[s]
	if !ok || !colour {
		e.printf("%-*s", len(critic.Critical), s)
		return
	}
	e.raw(c)
	e.printf("%s", s)
	e.raw(colourReset)
	e.printf("%*s", len(critic.Critical)-len(s), "")
}

// writeText prints the reports for people: a header per file with its
// score and summary, then the issues grouped by task, plan-level first,
// each with its recommendation below, and a final count.
func writeText(w io.Writer, files []File, colour bool) error {
	out := &errWriter{w: w}
	for i, f := range files {
		if i > 0 {
			out.printf("\n")
		}
		rep := f.Report
		out.printf("%s: score %d/10. %s\n", displayPath(f.Path), rep.Score, rep.Summary)
		if len(rep.Issues) == 0 {
			continue
		}
		posWidth, checkWidth := 0, 0
		for _, is := range rep.Issues {
			posWidth = max(posWidth, len(is.Pos.String()))
			checkWidth = max(checkWidth, len(is.Check))
		}
		indent := strings.Repeat(" ", 4+posWidth+2+len(critic.Critical)+2+checkWidth+2)
		for _, group := range groupByTask(rep.Issues) {
			if group[0].TaskID == "" {
				out.printf("  plan\n")
			} else {
				out.printf("  task %s\n", group[0].TaskID)
			}
			for _, is := range group {
				msg := is.Message
				if is.Field != "" {
					msg = is.Field + ": " + msg
				}
				out.printf("    %-*s  ", posWidth, is.Pos)
				out.severity(is.Severity, colour)
				out.printf("  %-*s  %s\n", checkWidth, is.Check, prose.OneLine(msg))
				if is.Recommendation != "" {
					out.printf("%s%s\n", indent, prose.OneLine(is.Recommendation))
				}
			}
		}
	}
	var crit, warn, info int
	for _, f := range files {
		crit += f.Report.Count(critic.Critical)
		warn += f.Report.Count(critic.Warning)
		info += f.Report.Count(critic.Info)
	}
	if len(files) > 0 {
		out.printf("\n")
	}
	out.printf("%s, %d critical, %s, %d info\n", prose.Plural(len(files), "file"), crit, prose.Plural(warn, "warning"), info)
	return out.err
}

// displayPath names a file in the text format.
func displayPath(path string) string {
	if path == Stdin {
		return "<stdin>"
	}
	return path
}

// groupByTask groups issues by task in order of first appearance, the
// plan-level issues first.
func groupByTask(issues []critic.Issue) [][]critic.Issue {
	index := make(map[string]int)
	var groups [][]critic.Issue
	if slices.ContainsFunc(issues, func(is critic.Issue) bool { return is.TaskID == "" }) {
		index[""] = 0
		groups = append(groups, nil)
	}
	for _, is := range issues {
		k, ok := index[is.TaskID]
		if !ok {
			k = len(groups)
			index[is.TaskID] = k
			groups = append(groups, nil)
		}
		groups[k] = append(groups[k], is)
	}
	return groups
}
