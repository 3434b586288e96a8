package doclint

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moduleRoot is where go.mod is, seen from this package's directory.
const moduleRoot = "../.."

// reference matches the words that point a reader to a specification
// document, an issue or a file outside the module: "seed 004", "the seed's
// failure taxonomy", "as the seed says", "DESIGN.md", "../shared/",
// "issue 11". "the seed" followed by what it holds ("the seed results")
// is the initial results of a run, not a document, and is allowed.
var reference = regexp.MustCompile(`(?i)\bseeds?\s+0\d\d\b|\bthe\s+seeds?\b(?:'s?)?(?:\s+(\w+))?|\bDESIGN\.md\b|(?:\.\./)?\bshared/|\bissues?\s+#?\d+\b`)

// seedData are the words after "the seed" that make it data, not a document.
var seedData = map[string]bool{"result": true, "results": true, "output": true, "outputs": true, "value": true, "values": true}

// ref is a reference found in a text, at byte offset off.
type ref struct {
	text string
	off  int
}

// references returns the references in text.
func references(text string) []ref {
	var found []ref
	for _, m := range reference.FindAllStringSubmatchIndex(text, -1) {
		match := text[m[0]:m[1]]
		if m[2] >= 0 && !strings.Contains(match, "'") && seedData[strings.ToLower(text[m[2]:m[3]])] {
			continue
		}
		found = append(found, ref{text: match, off: m[0]})
	}
	return found
}

func texts(refs []ref) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.text)
	}
	return out
}

func TestReferences(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"Replanning stops at the limits of seed 004: a total", []string{"seed 004"}},
		{"Class is the kind of a task failure, as the seed's failure taxonomy names it.", []string{"the seed's failure"}},
		{"exactly as the on_failure × critical\n// table of the seed says:", []string{"the seed says"}},
		{"design smells the seed names", []string{"the seed names"}},
		{"as the seeds describe", []string{"the seeds describe"}},
		{"the table of the seed", []string{"the seed"}},
		{"See DESIGN.md and ../shared/notes for why; fixed in issue 11 and issue #4.", []string{"DESIGN.md", "../shared/", "issue 11", "issue #4"}},
		{"copied from the kit (`shared/localllm/`)", []string{"shared/"}},
		{"the seedling grows; a shared lock", nil},
		{"seed applies the initial results and the review decisions.", nil},
		{"commits the seed results as done, then the seed outputs", nil},
		{"a random source with a fixed seed, and the seed value is logged", nil},
		{"outputs to commit as done when it is created; seeds of a run", nil},
		{"the issue is that 3 tasks", nil},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			assert.Equal(t, tt.want, texts(references(tt.text)))
		})
	}
}

// TestNoReferencesToDocuments fails when a comment of a Go file (tests
// excepted) or a markdown page of the module sends its reader to a
// specification document, an issue or a file outside the module.
func TestNoReferencesToDocuments(t *testing.T) {
	_, err := os.Stat(filepath.Join(moduleRoot, "go.mod"))
	require.NoError(t, err, "the module root is not %s", moduleRoot)
	var goFiles, pages int
	err = filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != moduleRoot && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go"):
			goFiles++
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			for _, g := range f.Comments {
				// Lines are joined, so that a phrase broken over two lines is
				// found, and a reference is reported at the line it starts on.
				var text strings.Builder
				starts := make([]int, len(g.List))
				for i, c := range g.List {
					starts[i] = text.Len()
					text.WriteString(strings.TrimPrefix(c.Text, "//"))
					text.WriteByte(' ')
				}
				for _, r := range references(text.String()) {
					i := sort.SearchInts(starts, r.off+1) - 1
					t.Errorf("%s: the comment refers to %q, which a reader cannot look up: state the rule itself",
						fset.Position(g.List[i].Pos()), r.text)
				}
			}
		case strings.HasSuffix(name, ".md"):
			pages++
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(b), "\n") {
				for _, r := range references(line) {
					t.Errorf("%s:%d: the page refers to %q, which a reader cannot look up: state the rule itself", path, i+1, r.text)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	// A walk that finds nothing must not pass.
	assert.NotZero(t, goFiles, "no Go file found under %s", moduleRoot)
	assert.NotZero(t, pages, "no markdown page found under %s", moduleRoot)
}
