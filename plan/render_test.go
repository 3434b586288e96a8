package plan_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dagent-dev/dagent/internal/golden"
	"github.com/dagent-dev/dagent/plan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// renderPlans are the inputs under testdata/render, as <name>.plan.json.
// Each renders to a golden file per format, <name>.<ext>.
var renderPlans = []struct {
	name, about string
}{
	{"linear", "three tasks in a chain, with a mission and agents"},
	{"diamond", "a fan-out joined by a synthesis gate, a human review and a non-critical task"},
	{"awkward", "ids and agents with spaces, dots, quotes, backslashes, pipes, backticks, HTML and unicode"},
	{"single", "one task, no edges, no mission"},
}

// renderExt is the golden file extension of each format.
var renderExt = map[plan.Format]string{
	plan.JSON:     "json",
	plan.Markdown: "md",
	plan.Mermaid:  "mmd",
	plan.DOT:      "dot",
}

func loadRenderDAG(t *testing.T, name string) *plan.DAG {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "render", name+".plan.json"))
	require.NoError(t, err)
	p, err := plan.Parse(data)
	require.NoError(t, err)
	require.NoError(t, p.Validate())
	d, err := p.DAG()
	require.NoError(t, err)
	return d
}

func renderDAG(t *testing.T, d *plan.DAG, f plan.Format) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, d.Render(&b, f))
	return b.Bytes()
}

func TestRenderGolden(t *testing.T) {
	require.Len(t, renderExt, len(plan.Formats), "every format needs a golden extension")
	for _, tc := range renderPlans {
		d := loadRenderDAG(t, tc.name)
		for _, f := range plan.Formats {
			t.Run(tc.name+"/"+string(f), func(t *testing.T) {
				got := renderDAG(t, d, f)
				require.True(t, bytes.HasSuffix(got, []byte("\n")), "output must end with a newline")
				golden.Check(t, filepath.Join("testdata", "render", tc.name+"."+renderExt[f]), got)
			})
		}
	}
}

func TestRenderDeterministic(t *testing.T) {
	for _, tc := range renderPlans {
		for _, f := range plan.Formats {
			t.Run(tc.name+"/"+string(f), func(t *testing.T) {
				d := loadRenderDAG(t, tc.name)
				first := renderDAG(t, d, f)
				assert.Equal(t, string(first), string(renderDAG(t, d, f)), "same DAG, second rendering")
				again := loadRenderDAG(t, tc.name)
				assert.Equal(t, string(first), string(renderDAG(t, again, f)), "same plan parsed again")
			})
		}
	}
}

func TestRenderJSONRoundTrip(t *testing.T) {
	for _, tc := range renderPlans {
		t.Run(tc.name, func(t *testing.T) {
			d := loadRenderDAG(t, tc.name)
			out := renderDAG(t, d, plan.JSON)
			var got struct {
				Phases [][]string
				Edges  [][2]string
			}
			require.NoError(t, json.Unmarshal(out, &got))
			require.NotNil(t, got.Edges, "edges must be a list, never null:\n%s", out)
			assert.Equal(t, d.Phases(), got.Phases)
			want := d.Edges()
			if want == nil {
				want = [][2]string{}
			}
			assert.Equal(t, want, got.Edges)
		})
	}
}

func TestRenderJSONNoEdges(t *testing.T) {
	d := loadRenderDAG(t, "single")
	require.Empty(t, d.Edges())
	assert.Contains(t, string(renderDAG(t, d, plan.JSON)), `"edges": []`)
}

func TestRenderJSONNoHTMLEscaping(t *testing.T) {
	out := string(renderDAG(t, loadRenderDAG(t, "awkward"), plan.JSON))
	assert.Contains(t, out, `"<b>bold</b> & #quot; 50%"`)
	assert.NotContains(t, out, `\u003c`)
}

func TestRenderMarkdownAlias(t *testing.T) {
	d := loadRenderDAG(t, "diamond")
	assert.Equal(t, string(renderDAG(t, d, plan.Markdown)), string(renderDAG(t, d, "markdown")))
}

func TestRenderUnknownFormat(t *testing.T) {
	d := loadRenderDAG(t, "single")
	var b bytes.Buffer
	err := d.Render(&b, "png")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"png"`)
	assert.Zero(t, b.Len(), "nothing is written for an unknown format")
}

// renderFailWriter fails every write with err.
type renderFailWriter struct{ err error }

func (w renderFailWriter) Write([]byte) (int, error) { return 0, w.err }

func TestRenderWriteError(t *testing.T) {
	d := loadRenderDAG(t, "linear")
	errFull := errors.New("disk full")
	for _, f := range plan.Formats {
		assert.ErrorIs(t, d.Render(renderFailWriter{errFull}, f), errFull, "format %s", f)
	}
}

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in   string
		want plan.Format
	}{
		{"json", plan.JSON},
		{"mermaid", plan.Mermaid},
		{"dot", plan.DOT},
		{"md", plan.Markdown},
		{"markdown", plan.Markdown},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := plan.ParseFormat(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	for _, f := range plan.Formats {
		got, err := plan.ParseFormat(string(f))
		require.NoError(t, err, "format %s", f)
		assert.Equal(t, f, got)
	}
	for _, bad := range []string{"png", "", "JSON ", "svg"} {
		_, err := plan.ParseFormat(bad)
		require.Error(t, err, "format %q", bad)
		assert.Contains(t, err.Error(), `"`+bad+`"`)
	}
}

// escapingDAG is a plan built in Go with what Parse would not produce from
// the testdata: an id with a backslash before a pipe, a directive-like id,
// agents with line breaks and padding, and a Markdown-laden mission.
func escapingDAG(t *testing.T, mission string) *plan.DAG {
	t.Helper()
	a := plan.NewTask(`a\|b`, "")
	a.Agent = "two\r\nlines"
	b := plan.NewTask(`%%{init: {"theme": "dark"}}%%`, "")
	b.Agent = " padded "
	b.DependsOn = []string{a.ID}
	d, err := (&plan.Plan{Mission: mission, Tasks: []plan.Task{a, b}}).DAG(plan.WithWorkers(a.Agent, b.Agent))
	require.NoError(t, err)
	return d
}

func TestRenderEscaping(t *testing.T) {
	d := escapingDAG(t, "")
	tests := []struct {
		format plan.Format
		want   []string
	}{
		{plan.Markdown, []string{
			"| `a\\\\|b` | `two lines` | task | — | yes |\n",
			"| `%%{init: {\"theme\": \"dark\"}}%%` | `  padded  ` | task | `a\\\\|b` | yes |\n",
		}},
		{plan.Mermaid, []string{
			`    t0["a\|b<br/>two<br/>lines"]` + "\n",
			`    t1["#37;#37;{init: {#quot;theme#quot;: #quot;dark#quot;}}#37;#37;<br/> padded "]` + "\n",
			"    t0 --> t1\n",
		}},
		{plan.DOT, []string{
			`    "a\\|b" [label="a\\|b\ntwo\nlines"];` + "\n",
			`    "%%{init: {\"theme\": \"dark\"}}%%" [label="%%{init: {\"theme\": \"dark\"}}%%\n padded "];` + "\n",
			`    "a\\|b" -> "%%{init: {\"theme\": \"dark\"}}%%";` + "\n",
		}},
	}
	for _, tc := range tests {
		t.Run(string(tc.format), func(t *testing.T) {
			got := string(renderDAG(t, d, tc.format))
			for _, w := range tc.want {
				assert.Contains(t, got, w)
			}
		})
	}
}

func TestRenderMarkdownMission(t *testing.T) {
	tests := []struct {
		mission, want string
	}{
		{"", ""},
		{"  \n ", ""},
		{"Plain words, kept as they are.", "Plain words, kept as they are."},
		{"one\nline\r\n  at   a time", "one line at a time"},
		{"# not a heading", `\# not a heading`},
		{"> not a quote, a > b", `\> not a quote, a > b`},
		{"- not a list - really", `\- not a list - really`},
		{"+ not a list", `\+ not a list`},
		{"2024. Not a list; 3. neither", `2024\. Not a list; 3. neither`},
		{"7) not a list", `7\) not a list`},
		{"*not* _emphasis_ ~nor~ `code`", "\\*not\\* \\_emphasis\\_ \\~nor\\~ \\`code\\`"},
		{"[not](a link) <not> &amp; a|b $5 and $6 C:\\dir", `\[not\](a link) \<not> \&amp; a\|b \$5 and \$6 C:\\dir`},
	}
	for _, tc := range tests {
		t.Run(tc.mission, func(t *testing.T) {
			got := string(renderDAG(t, escapingDAG(t, tc.mission), plan.Markdown))
			head, table, ok := strings.Cut(got, "| id |")
			require.True(t, ok, got)
			assert.True(t, strings.HasPrefix(table, " agent | type | depends_on | critical |\n"))
			if tc.want == "" {
				assert.Empty(t, head)
			} else {
				assert.Equal(t, tc.want+"\n\n", head)
			}
		})
	}
}
