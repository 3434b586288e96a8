package plan

import (
	"fmt"
	"io"
)

// Format is a way to render a DAG.
type Format string

// Renderings.
const (
	// Markdown is a table of id, agent, type, depends_on and critical.
	Markdown Format = "md"
	// Mermaid is a Mermaid flowchart.
	Mermaid Format = "mermaid"
	// DOT is a Graphviz digraph.
	DOT Format = "dot"
	// JSON is {"phases": [[...]], "edges": [[from, to], ...]}.
	JSON Format = "json"
)

// Formats lists every Format.
var Formats = []Format{JSON, Mermaid, DOT, Markdown}

// ParseFormat reads a format name; "markdown" is accepted for Markdown.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Markdown, Mermaid, DOT, JSON:
		return f, nil
	case "markdown":
		return Markdown, nil
	}
	return "", fmt.Errorf("unknown format %q: use json, mermaid, dot or md", s)
}

// Render writes the DAG in format f. The output is deterministic: the same
// plan always renders to the same bytes.
func (d *DAG) Render(w io.Writer, f Format) error {
	return fmt.Errorf("render %s: not implemented", f)
}
