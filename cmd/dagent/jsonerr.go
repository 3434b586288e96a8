package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/dagent-dev/dagent/internal/climain"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/plan"
)

// docVersion is the version of the form of each JSON document dagent
// prints, its "version" key: a reader that finds a newer one may not
// understand it. A run's result has its own, [runner.ResultVersion].
const docVersion = 1

// errorDoc is the JSON error document of a command asked for --format
// json that fails before it has printed its document.
type errorDoc = climain.ErrorDoc

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
