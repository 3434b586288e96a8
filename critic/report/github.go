package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/dagent-dev/dagent/critic"
)

// GitHub Actions workflow command levels by severity.
var githubLevel = map[critic.Severity]string{
	critic.Critical: "error",
	critic.Warning:  "warning",
	critic.Info:     "notice",
}

// writeGitHub prints one GitHub Actions workflow command per issue, which
// annotates the file at the task's line. Issues of standard input name
// no file.
func writeGitHub(w io.Writer, files []File, root string) error {
	out := &errWriter{w: w}
	for _, f := range files {
		for _, is := range f.Report.Issues {
			level, ok := githubLevel[is.Severity]
			if !ok {
				level = "notice"
			}
			var props []string
			if f.Path != Stdin {
				props = append(props, "file="+githubProperty(repoPath(f.Path, root)))
				if line, col := position(is.Pos); line > 0 {
					props = append(props, fmt.Sprintf("line=%d", line))
					if col > 0 {
						props = append(props, fmt.Sprintf("col=%d", col))
					}
				}
			}
			props = append(props, "title="+githubProperty(is.Check))
			out.printf("::%s %s::%s\n", level, strings.Join(props, ","), githubData(annotation(is)))
		}
	}
	return out.err
}

var (
	githubDataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	githubPropertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// githubData escapes the message of a workflow command.
func githubData(s string) string { return githubDataEscaper.Replace(s) }

// githubProperty escapes a property value of a workflow command.
func githubProperty(s string) string { return githubPropertyEscaper.Replace(s) }
