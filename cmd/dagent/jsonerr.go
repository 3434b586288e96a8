package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/plan"
	"github.com/spf13/cobra"
)

// docVersion is the version of the form of each JSON document dagent
// prints, its "version" key: a reader that finds a newer one may not
// understand it. A run's result has its own, [runner.ResultVersion].
const docVersion = 1

// errorDoc is what a command asked for --format json prints on standard
// output when it fails before it has printed its document: the same error
// is on standard error, as text.
type errorDoc struct {
	Version  int             `json:"version"`
	Error    string          `json:"error"`
	ExitCode int             `json:"exit_code"`
	Problems []*plan.Problem `json:"problems,omitempty"`
}

// reported is an error a command has already printed on standard error:
// its code is the command's exit code, and its text what the JSON error
// document says.
type reported struct {
	code exitCode
	msg  string
}

func (r reported) Error() string { return r.msg }

func (r reported) Unwrap() error { return r.code }

// countingWriter counts what goes through it: whether a command printed
// its document.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// jsonAsked reports whether cmd was run with --format json given.
func jsonAsked(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup("format")
	return f != nil && f.Changed && f.Value.String() == "json"
}

// writeErrorDoc prints the JSON error document of err, which ended the
// command with code.
func writeErrorDoc(w io.Writer, err error, code int) error {
	doc := errorDoc{Version: docVersion, ExitCode: code, Problems: plan.Problems(err)}
	var c exitCode
	switch {
	case errors.Is(err, errNoLLM):
		doc.Error = errNoLLM.Error()
	case errors.Is(err, errNoModel):
		doc.Error = errNoModel.Error()
	case doc.Problems != nil:
		doc.Error = fmt.Sprintf("the plan is invalid: %s", prose.Plural(len(doc.Problems), "problem"))
	case errors.As(err, &c) && err == error(c):
		doc.Error = fmt.Sprintf("dagent exited with status %d", code)
	default:
		doc.Error = err.Error()
	}
	return encodeJSON(w, doc)
}
