package verify_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/verify"
)

// referencePage is the language reference whose examples TestReference runs.
const referencePage = "../docs/predicates.md"

// TestReference runs every annotated example of the language reference, so
// that the page cannot drift from the code. The page's "How to read the
// examples" section defines the forms:
//
//   - in a clojure block, a line `EXPR ;=> VALUE` (VALUE printed as str
//     prints the elements of a vector) or `EXPR ;!! compile error: MSG` /
//     `EXPR ;!! runtime error: CAUSE`, and lines `;; data/NAME = JSON` that
//     bind data for the lines below them in the same block. Such a block
//     holds nothing else: an example spans one line, and any other line
//     fails the test rather than go unchecked;
//   - a clojure block with no annotations is one predicate, possibly over
//     several lines, and must be followed by a table of data and verdicts
//     or by a text block holding its compile error;
//   - a table whose header is `predicate | verify.Check` gives Check's
//     diagnostics for each predicate.
func TestReference(t *testing.T) {
	page, err := os.ReadFile(referencePage)
	require.NoError(t, err)
	items := parsePage(string(page))

	counts := map[string]int{}
	for i, it := range items {
		switch {
		case it.table != nil && isCheckTable(it.table):
			counts["check"] += runCheckTable(t, it.table)
		case it.block == nil || it.block.lang != "clojure":
		case it.block.annotated():
			counts["annotated line"] += runAnnotated(t, it.block)
		default:
			next := following(items, i)
			switch {
			case next != nil && next.table != nil:
				counts["verdict"] += runVerdictTable(t, it.block, next.table)
			case next != nil && next.block != nil && next.block.lang == "text":
				counts["compile error block"]++
				runCompileErrorBlock(t, it.block, next.block)
			default:
				t.Errorf("%s:%d: a clojure block with no annotations must be followed by a verdict table or a text block with its compile error",
					referencePage, it.block.line)
			}
		}
	}
	// A parser that finds nothing must not pass: every form is on the page.
	for _, kind := range []string{"annotated line", "verdict", "compile error block", "check"} {
		assert.NotZero(t, counts[kind], "no %s example found in %s: is the parser broken?", kind, referencePage)
	}
	t.Logf("ran %d annotated lines, %d verdict rows, %d compile error blocks, %d check rows",
		counts["annotated line"], counts["verdict"], counts["compile error block"], counts["check"])
}

// item is a fenced block, a table or a line of prose of the page.
type item struct {
	block *block
	table *table
}

type block struct {
	lang  string
	line  int // of the first line inside the fence
	lines []string
}

func (b *block) annotated() bool {
	for _, l := range b.lines {
		if strings.Contains(l, ";=>") || strings.Contains(l, ";!!") {
			return true
		}
	}
	return false
}

type table struct {
	line   int
	header []string
	rows   []row
}

type row struct {
	line  int
	cells []string
}

// parsePage splits a markdown page into fenced blocks, tables and prose.
// Blank lines are dropped, so two items are adjacent when only blank lines
// separate them. Fences may be indented (inside a list item); their
// content loses that indentation.
func parsePage(page string) []item {
	lines := strings.Split(page, "\n")
	var items []item
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		switch {
		case trimmed == "":
		case strings.HasPrefix(trimmed, "```"):
			indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
			b := &block{lang: strings.TrimPrefix(trimmed, "```"), line: i + 2}
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				l := lines[i]
				b.lines = append(b.lines, l[min(indent, len(l)-len(strings.TrimLeft(l, " "))):])
			}
			items = append(items, item{block: b})
		case strings.HasPrefix(trimmed, "|"):
			tb := &table{line: i + 1, header: cells(trimmed)}
			for i++; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				c := cells(strings.TrimSpace(lines[i]))
				if strings.Trim(strings.Join(c, ""), "-: ") == "" {
					continue // the delimiter row
				}
				tb.rows = append(tb.rows, row{line: i + 1, cells: c})
			}
			i--
			items = append(items, item{table: tb})
		default:
			items = append(items, item{})
		}
	}
	return items
}

// cells splits a table row on its unescaped pipes and trims each cell.
func cells(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var out []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

func following(items []item, i int) *item {
	if i+1 < len(items) {
		return &items[i+1]
	}
	return nil
}

// codeSpan returns the text of a cell that is one `code span`.
func codeSpan(t *testing.T, cell string) string {
	t.Helper()
	if len(cell) < 2 || cell[0] != '`' || cell[len(cell)-1] != '`' || strings.Count(cell, "`") != 2 {
		t.Fatalf("expected one `code span`, found %q", cell)
	}
	return cell[1 : len(cell)-1]
}

// decodeData decodes a binding as `dagent verify` decodes its flags: JSON
// with integers kept, or the text itself as a string when it is not JSON.
// data/depends must be a JSON object.
func decodeData(t *testing.T, name, text string) func(*verify.Bindings) {
	t.Helper()
	v, err := jsonv.DecodeBytes([]byte(text))
	if err != nil {
		require.NotEqual(t, "data/depends", name, "data/depends must be a JSON object: %s", text)
		v = text
	}
	switch name {
	case "data/input":
		return func(b *verify.Bindings) { b.Input = v }
	case "data/result":
		return func(b *verify.Bindings) { b.Result = v }
	case "data/depends":
		m, ok := v.(map[string]any)
		require.True(t, ok, "data/depends must be a JSON object: %s", text)
		return func(b *verify.Bindings) { b.Depends = m }
	}
	t.Fatalf("unknown binding %q: the data is data/input, data/result and data/depends", name)
	return nil
}

// runAnnotated runs each `;=>` and `;!!` line of b with the bindings that
// the `;;` lines above it set, and returns how many it ran.
func runAnnotated(t *testing.T, b *block) int {
	var bindings verify.Bindings
	n := 0
	for i, l := range b.lines {
		line := b.line + i
		if strings.TrimSpace(l) == "" {
			continue
		}
		if name, value, ok := strings.Cut(strings.TrimPrefix(l, ";; "), " = "); ok && strings.HasPrefix(l, ";; data/") {
			decodeData(t, name, value)(&bindings)
			continue
		}
		expr, want, isValue := strings.Cut(l, " ;=> ")
		if !isValue {
			var isErr bool
			if expr, want, isErr = strings.Cut(l, " ;!! "); !isErr {
				t.Errorf("%s:%d: a line of an annotated block must be an example ending in ;=> or ;!!, or a ;; data/NAME = JSON binding: %q",
					referencePage, line, l)
				continue
			}
		}
		n++
		bnd := bindings
		t.Run(fmt.Sprintf("L%d %s", line, expr), func(t *testing.T) {
			if isValue {
				assert.Equal(t, want, valueOf(t, expr, bnd), "%s:%d", referencePage, line)
			} else {
				assert.Equal(t, want, errorOf(t, expr, bnd), "%s:%d", referencePage, line)
			}
		})
	}
	return n
}

// valueOf evaluates expr and prints its value. The package's own printer
// does it: (str [expr]) prints the value as str prints a vector's element,
// and a predicate's string result comes back as the verdict's diagnosis.
func valueOf(t *testing.T, expr string, b verify.Bindings) string {
	t.Helper()
	if msg := errorOf(t, expr, b); msg != "" {
		t.Fatalf("%s raised %s", expr, msg)
	}
	p, err := verify.Compile("(str [" + expr + "])")
	require.NoError(t, err)
	v, err := p.Eval(context.Background(), b)
	require.NoError(t, err)
	require.False(t, v.Passed)
	out, ok := strings.CutPrefix(v.Diagnosis, "[")
	require.True(t, ok, v.Diagnosis)
	out, ok = strings.CutSuffix(out, "]")
	require.True(t, ok, v.Diagnosis)
	return out
}

// errorOf compiles and evaluates expr, and returns its error as a `;!!`
// annotation shows it, or "" when there is none.
func errorOf(t *testing.T, expr string, b verify.Bindings) string {
	t.Helper()
	p, err := verify.Compile(expr)
	if err != nil {
		var ce *verify.CompileError
		require.ErrorAs(t, err, &ce)
		return "compile error: " + ce.Msg
	}
	if _, err := p.Eval(context.Background(), b); err != nil {
		var re *verify.RuntimeError
		require.ErrorAs(t, err, &re)
		return "runtime error: " + re.Err.Error()
	}
	return ""
}

// runVerdictTable evaluates the predicate of block b on the data of each
// row of tb and compares the verdict, and returns how many rows it ran.
func runVerdictTable(t *testing.T, b *block, tb *table) int {
	src := strings.Join(b.lines, "\n")
	last := len(tb.header) - 1
	if last < 1 || tb.header[last] != "verdict" {
		t.Errorf("%s:%d: the table under a predicate must end in a verdict column, found %q", referencePage, tb.line, tb.header)
		return 0
	}
	for _, r := range tb.rows {
		t.Run(fmt.Sprintf("L%d %s", r.line, strings.Join(r.cells[:last], " ")), func(t *testing.T) {
			require.Len(t, r.cells, len(tb.header), "%s:%d", referencePage, r.line)
			var bindings verify.Bindings
			for i, h := range tb.header[:last] {
				decodeData(t, codeSpan(t, h), codeSpan(t, r.cells[i]))(&bindings)
			}
			p, err := verify.Compile(src)
			require.NoError(t, err, "%s:%d", referencePage, b.line)
			v, err := p.Eval(context.Background(), bindings)
			want := r.cells[last]
			var got string
			switch {
			case err != nil:
				got = "runtime error: `" + err.Error() + "`"
			case v.Passed:
				got = "passes"
			default:
				got = "fails: `" + v.Diagnosis + "`"
			}
			assert.Equal(t, want, got, "%s:%d", referencePage, r.line)
		})
	}
	return len(tb.rows)
}

// runCompileErrorBlock compiles the predicate of block b and compares the
// whole error, snippet and caret included, with the text block after it.
func runCompileErrorBlock(t *testing.T, b, text *block) {
	src := strings.Join(b.lines, "\n")
	t.Run(fmt.Sprintf("L%d %s", b.line, b.lines[0]), func(t *testing.T) {
		_, err := verify.Compile(src)
		require.Error(t, err, "%s:%d", referencePage, b.line)
		assert.Equal(t, strings.Join(text.lines, "\n"), err.Error(), "%s:%d", referencePage, text.line)
	})
}

func isCheckTable(tb *table) bool {
	return len(tb.header) == 2 && tb.header[0] == "predicate" && tb.header[1] == "`verify.Check`"
}

// runCheckTable runs verify.Check on each row's predicate and compares its
// diagnostics, one code span each, or "no diagnostics".
func runCheckTable(t *testing.T, tb *table) int {
	for _, r := range tb.rows {
		t.Run(fmt.Sprintf("L%d check %s", r.line, r.cells[0]), func(t *testing.T) {
			require.Len(t, r.cells, 2, "%s:%d", referencePage, r.line)
			got := "no diagnostics"
			if ds := verify.Check(codeSpan(t, r.cells[0])); len(ds) > 0 {
				spans := make([]string, len(ds))
				for i, d := range ds {
					spans[i] = "`" + d.String() + "`"
				}
				got = strings.Join(spans, " ")
			}
			assert.Equal(t, r.cells[1], got, "%s:%d", referencePage, r.line)
		})
	}
	return len(tb.rows)
}
