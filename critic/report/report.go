// Package report writes the critic's reports for people, programs and CI
// services: text, JSON, GitHub Actions annotations and SARIF 2.1.0.
//
// A [File] is the [critic.Report] of one plan file and the path that names
// it; [Write] prints a set of them in a [Format]. Every format is
// deterministic: the same files give the same bytes. These are the outputs
// of `dagent lint`, so a service that embeds the critic can produce them
// without the command.
package report

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/plan"
)

// Stdin is the [File.Path] of a plan read from standard input. The text
// format names it <stdin>, GitHub annotations name no file for it, and the
// JSON and SARIF formats keep it as it is.
const Stdin = "-"

// File is the review of one plan file. The zero File is a file with no
// name and no issues.
type File struct {
	// Path names the file as the caller gave it: a relative or absolute
	// path, or [Stdin].
	Path string
	// Report is the critic's review of the file's content.
	Report critic.Report
}

// Format is an output format of [Write]. The zero Format is none of them.
type Format string

// The formats [Write] prints.
const (
	// Text is for people: a header per file with its score and summary,
	// the issues grouped by task with their recommendations, and a final
	// count.
	Text Format = "text"
	// JSON is one document: {"version": 1, "files": [{"path", "score",
	// "summary", "issues": [{"check", "severity", "task_id", "field",
	// "message", "recommendation", "line", "column"}],
	// "recommendations"}]}; "version" is the version of the document's
	// form, line and column are 0 when unknown, and the lists are never
	// null.
	JSON Format = "json"
	// SARIF is one SARIF 2.1.0 run, as GitHub code scanning reads it: one
	// rule per check found, one result per issue.
	SARIF Format = "sarif"
	// GitHub is one GitHub Actions workflow command per issue, which
	// annotates the file at the issue's line.
	GitHub Format = "github"
)

// ErrUnknownFormat is the error, wrapped, of [ParseFormat] and [Write]
// for a name that is not a [Format].
var ErrUnknownFormat = errors.New("unknown format")

// ParseFormat returns the [Format] named s: text, json, sarif or github.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Text, JSON, SARIF, GitHub:
		return f, nil
	}
	return "", fmt.Errorf("%w %q: use text, json, sarif or github", ErrUnknownFormat, s)
}

// Options tune [Write]. The zero value prints text without colour,
// leaves absolute paths absolute and describes the tool as dagent without
// a version.
type Options struct {
	// Colour colours the severities of the text format with ANSI escapes.
	// Whether the output is a terminal that wants colour is the caller's
	// to decide.
	Colour bool
	// Root is the absolute directory, usually the repository's root, that
	// GitHub and SARIF locations are relative to: an absolute path inside
	// it is made relative to it. Empty leaves absolute paths absolute.
	Root string
	// Tool describes the tool in the SARIF log.
	Tool Tool
}

// Tool is the SARIF log's driver: the tool that produced the reports. The
// zero Tool is dagent without a version.
type Tool struct {
	// Name is the tool's name; empty is "dagent".
	Name string
	// Version is the tool's version; empty leaves it out.
	Version string
	// InformationURI is where to learn about the tool; empty is dagent's
	// repository.
	InformationURI string
}

// Write prints files to w in format f, in the order given, and returns
// the first error of w. A format that is not one of [Text], [JSON],
// [SARIF] or [GitHub] is an error wrapping [ErrUnknownFormat], and nothing
// is written.
func Write(w io.Writer, f Format, files []File, opts Options) error {
	switch f {
	case Text:
		return writeText(w, files, opts.Colour)
	case JSON:
		return writeJSON(w, files)
	case SARIF:
		return writeSARIF(w, files, opts)
	case GitHub:
		return writeGitHub(w, files, opts.Root)
	}
	_, err := ParseFormat(string(f))
	return err
}

// where names what an issue is about: "task ID: FIELD" or "plan: FIELD".
func where(is critic.Issue) string {
	s := "plan"
	if is.TaskID != "" {
		s = "task " + is.TaskID
	}
	if is.Field != "" {
		s += ": " + is.Field
	}
	return s
}

// annotation is an issue's message for a CI service: where, what, and
// the recommendation on a line of its own.
func annotation(is critic.Issue) string {
	msg := where(is) + ": " + is.Message
	if is.Recommendation != "" {
		msg += "\n" + is.Recommendation
	}
	return msg
}

// position is the line and column of pos, 0 and 0 when unknown.
func position(pos plan.Position) (line, column int) {
	if !pos.IsValid() {
		return 0, 0
	}
	return pos.Line, max(pos.Column, 0)
}

// repoPath is path as a CI service expects it: relative to root when it
// is an absolute path inside it, with forward slashes.
func repoPath(path, root string) string {
	if path == Stdin {
		return path
	}
	if filepath.IsAbs(path) && root != "" {
		if rel, err := filepath.Rel(root, path); err == nil && filepath.IsLocal(rel) {
			path = rel
		}
	}
	return filepath.ToSlash(filepath.Clean(path))
}
