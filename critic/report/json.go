package report

import (
	"io"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/jsonv"
)

// jsonVersion is the version of the form of the [JSON] document.
const jsonVersion = 1

// The JSON format's document.
type (
	jsonDoc struct {
		Version int        `json:"version"`
		Files   []jsonFile `json:"files"`
	}
	jsonFile struct {
		Path            string      `json:"path"`
		Score           int         `json:"score"`
		Summary         string      `json:"summary"`
		Issues          []jsonIssue `json:"issues"`
		Recommendations []string    `json:"recommendations"`
	}
	jsonIssue struct {
		Check          string          `json:"check"`
		Severity       critic.Severity `json:"severity"`
		TaskID         string          `json:"task_id"`
		Field          string          `json:"field"`
		Message        string          `json:"message"`
		Recommendation string          `json:"recommendation"`
		Line           int             `json:"line"`
		Column         int             `json:"column"`
	}
)

func writeJSON(w io.Writer, files []File) error {
	doc := jsonDoc{Version: jsonVersion, Files: make([]jsonFile, 0, len(files))}
	for _, f := range files {
		jf := jsonFile{
			Path:            f.Path,
			Score:           f.Report.Score,
			Summary:         f.Report.Summary,
			Issues:          make([]jsonIssue, 0, len(f.Report.Issues)),
			Recommendations: append([]string{}, f.Report.Recommendations...),
		}
		for _, is := range f.Report.Issues {
			line, col := position(is.Pos)
			jf.Issues = append(jf.Issues, jsonIssue{
				Check: is.Check, Severity: is.Severity, TaskID: is.TaskID, Field: is.Field,
				Message: is.Message, Recommendation: is.Recommendation, Line: line, Column: col,
			})
		}
		doc.Files = append(doc.Files, jf)
	}
	return jsonv.EncodeIndent(w, doc, "  ")
}
