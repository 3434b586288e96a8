package plan

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// Format is a way to render a [DAG]. The zero Format is not one:
// [DAG.Render] refuses it.
type Format string

// renderJSONVersion is the version of the form of the [JSON] rendering.
const renderJSONVersion = 1

// Renderings.
const (
	// Markdown is a table of id, agent, type, depends_on and critical.
	Markdown Format = "md"
	// Mermaid is a Mermaid flowchart.
	Mermaid Format = "mermaid"
	// DOT is a Graphviz digraph.
	DOT Format = "dot"
	// JSON is {"version": 1, "phases": [[...]], "edges": [[from, to],
	// ...]}; "version" is the version of the document's form.
	JSON Format = "json"
)

// Formats lists every [Format].
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

// Render writes the DAG in format f, or in the format any name [ParseFormat]
// accepts stands for. The output is deterministic: the same plan always
// renders to the same bytes, and it ends with a newline.
//
// In every format the tasks keep their source order and the edges run from
// a dependency to its dependent, in the order of [DAG.Edges]. In the Mermaid and
// DOT renderings a synthesis gate is a hexagon, a human review a diamond (it
// is where a person decides) and any other task a box; a task that is not
// critical is dashed, and a task's label is its id, with its agent on a
// second line unless that is the default agent.
func (d *DAG) Render(w io.Writer, f Format) error {
	f, err := ParseFormat(string(f))
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	var b strings.Builder
	switch f {
	case JSON:
		if err := d.renderJSON(&b); err != nil {
			return fmt.Errorf("render %s: %w", f, err)
		}
	case Markdown:
		d.renderMarkdown(&b)
	case Mermaid:
		d.renderMermaid(&b)
	case DOT:
		d.renderDOT(&b)
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// renderJSON writes {"version", "phases", "edges"} indented by two spaces,
// each phase and each edge on a line of its own. Strings are encoded as
// Canonical encodes them, without HTML escaping.
func (d *DAG) renderJSON(b *strings.Builder) error {
	pairs := d.Edges()
	edges := make([][]string, len(pairs))
	for i, e := range pairs {
		edges[i] = []string{e[0], e[1]}
	}
	fmt.Fprintf(b, "{\n  \"version\": %d,\n  \"phases\": ", renderJSONVersion)
	if err := writeJSONLists(b, d.Phases()); err != nil {
		return err
	}
	b.WriteString(",\n  \"edges\": ")
	if err := writeJSONLists(b, edges); err != nil {
		return err
	}
	b.WriteString("\n}\n")
	return nil
}

// writeJSONLists writes a JSON array of arrays of strings, one inner array
// a line.
func writeJSONLists(b *strings.Builder, lists [][]string) error {
	if len(lists) == 0 {
		b.WriteString("[]")
		return nil
	}
	b.WriteString("[")
	for k, list := range lists {
		if k > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    [")
		for i, s := range list {
			if i > 0 {
				b.WriteString(", ")
			}
			q, err := marshal(s, "")
			if err != nil {
				return err
			}
			b.Write(q)
		}
		b.WriteString("]")
	}
	b.WriteString("\n  ]")
	return nil
}

// renderMarkdown writes the mission, if any, as a paragraph, then a GitHub
// table of the tasks in source order. Ids and agents are code spans.
func (d *DAG) renderMarkdown(b *strings.Builder) {
	p := d.plan
	if m := markdownProse(p.Mission); m != "" {
		b.WriteString(m)
		b.WriteString("\n\n")
	}
	b.WriteString("| id | agent | type | depends_on | critical |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	for i := range p.Tasks {
		t := &p.Tasks[i]
		deps := "—"
		if len(d.deps.of(i)) > 0 {
			names := make([]string, len(d.deps.of(i)))
			for k, j := range d.deps.of(i) {
				names[k] = markdownCode(p.Tasks[j].ID)
			}
			deps = strings.Join(names, ", ")
		}
		critical := "no"
		if t.Critical {
			critical = "yes"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n",
			markdownCode(t.ID), markdownCode(t.Agent), markdownCell(string(t.Type)), deps, critical)
	}
}

// markdownProse is s as one line of literal Markdown text: runs of white
// space become one space, and what Markdown or GitHub would read as markup
// is escaped with backslashes — inline markup anywhere, block markup (a
// heading, a quote, a list item) at the start.
func markdownProse(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	var b strings.Builder
	for i, r := range s {
		switch {
		case strings.ContainsRune("\\`*_[]<&|~$", r),
			i == 0 && strings.ContainsRune("#>-+", r),
			i == digits && digits > 0 && (r == '.' || r == ')'):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// markdownCell makes s fit in one table cell: line breaks and other control
// characters become spaces and pipes are escaped. GitHub's table parser
// removes the backslash of \| before any other parsing, code spans included.
func markdownCell(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, normalizeNewlines(s))
	return strings.ReplaceAll(s, "|", `\|`)
}

// markdownCode is s as a code span in a table cell: delimited by one more
// backtick than the longest run of backticks in s, and padded with a space
// when s starts or ends with a backtick or with spaces on both ends, which
// CommonMark would otherwise strip.
func markdownCode(s string) string {
	if s == "" {
		return ""
	}
	s = markdownCell(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") ||
		strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") && strings.Trim(s, " ") != "" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// renderMermaid writes a Mermaid flowchart. Node ids are t0, t1, ... by task
// index, since task ids may hold anything; labels are quoted. Shapes: a task
// is t0["id"], a synthesis gate the hexagon t1{{"id"}}, a human review the
// rhombus t2{"id"}. Tasks that are not critical get the class optional,
// drawn dashed.
func (d *DAG) renderMermaid(b *strings.Builder) {
	p := d.plan
	b.WriteString("flowchart TD\n")
	index := make(map[string]int, len(p.Tasks))
	var optional []string
	for i := range p.Tasks {
		t := &p.Tasks[i]
		index[t.ID] = i
		pre, post := `["`, `"]`
		switch t.Type {
		case TypeSynthesisGate:
			pre, post = `{{"`, `"}}`
		case TypeHumanReview:
			pre, post = `{"`, `"}`
		}
		fmt.Fprintf(b, "    t%d%s%s%s\n", i, pre, mermaidLabel(t.ID, t.Agent), post)
		if !t.Critical {
			optional = append(optional, "t"+strconv.Itoa(i))
		}
	}
	for _, e := range d.Edges() {
		fmt.Fprintf(b, "    t%d --> t%d\n", index[e[0]], index[e[1]])
	}
	if len(optional) > 0 {
		b.WriteString("    classDef optional stroke-dasharray: 5 5\n")
		fmt.Fprintf(b, "    class %s optional\n", strings.Join(optional, ","))
	}
}

// mermaidLabel is the text of a node's label: the id, and the agent on a
// second line unless it is the default.
func mermaidLabel(id, agent string) string {
	// Mermaid deletes the last ";" of any line matching style.*:\S*#.*; (and
	// the same with classDef) before it parses, which would break the entity
	// codes below; with no ":" left in the label, no node line matches.
	colons := strings.Contains(id+agent, "style") || strings.Contains(id+agent, "classDef")
	label := mermaidText(id, colons)
	if agent != DefaultAgent && agent != "" {
		label += "<br/>" + mermaidText(agent, colons)
	}
	return label
}

// mermaidText escapes s for a quoted Mermaid label with Mermaid's entity
// codes (#quot; becomes &quot;): the quote that would end the string, the
// HTML specials, # so that no id reads as an entity code, % so that nothing
// reads as a %%{directive}%%, and ` so that no label becomes a Markdown
// string. Line breaks become <br/>.
func mermaidText(s string, colons bool) string {
	var b strings.Builder
	for _, r := range normalizeNewlines(s) {
		switch r {
		case '"':
			b.WriteString("#quot;")
		case '&':
			b.WriteString("#amp;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '#':
			b.WriteString("#35;")
		case '%':
			b.WriteString("#37;")
		case '`':
			b.WriteString("#96;")
		case '\n':
			b.WriteString("<br/>")
		case ':':
			if colons {
				b.WriteString("#58;")
			} else {
				b.WriteRune(r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// renderDOT writes a Graphviz digraph, left to right, one rank per phase.
func (d *DAG) renderDOT(b *strings.Builder) {
	p := d.plan
	b.WriteString("digraph plan {\n")
	b.WriteString("    rankdir=LR;\n")
	b.WriteString("    node [shape=box];\n")
	for i := range p.Tasks {
		t := &p.Tasks[i]
		label := dotEscape(t.ID)
		if t.Agent != DefaultAgent && t.Agent != "" {
			label += `\n` + dotEscape(t.Agent)
		}
		attrs := []string{`label="` + label + `"`}
		switch t.Type {
		case TypeSynthesisGate:
			attrs = append(attrs, "shape=hexagon")
		case TypeHumanReview:
			attrs = append(attrs, "shape=diamond")
		}
		if !t.Critical {
			attrs = append(attrs, "style=dashed")
		}
		fmt.Fprintf(b, "    %s [%s];\n", dotQuote(t.ID), strings.Join(attrs, ", "))
	}
	for _, phase := range d.Phases() {
		b.WriteString("    {rank=same;")
		for _, id := range phase {
			b.WriteString(" " + dotQuote(id) + ";")
		}
		b.WriteString("}\n")
	}
	for _, e := range d.Edges() {
		fmt.Fprintf(b, "    %s -> %s;\n", dotQuote(e[0]), dotQuote(e[1]))
	}
	b.WriteString("}\n")
}

// dotQuote is s as a DOT quoted string.
func dotQuote(s string) string { return `"` + dotEscape(s) + `"` }

// dotEscape escapes s for the inside of a DOT quoted string: backslashes
// and quotes are escaped, and line breaks become \n, which labels show as
// line breaks.
func dotEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(normalizeNewlines(s))
}

// normalizeNewlines turns \r\n and lone \r into \n.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}
