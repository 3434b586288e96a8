package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree writes files, by slash-separated path, under a new directory, and
// makes it the working directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	}
	t.Chdir(dir)
	return dir
}

var projectFiles = map[string]string{
	"a.json":                 `{"tasks": [{"id": "a", "input": "x"}]}`,
	"package.json":           `{"name": "web", "version": "1.0.0"}`,
	"broken.json":            `{"tasks": [`,
	"notes.md":               "# not JSON",
	"sub/b.json":             `{"steps": ["b"]}`,
	"sub/deeper/c.json":      `{"plan": {"tasks": [{"id": "c", "input": "x"}]}}`,
	"sub/w.json":             `{"workflow": []}`,
	"sub/ph.json":            `{"phases": []}`,
	"testdata/t.json":        `{"tasks": [{"id": "t", "input": "x"}]}`,
	".hidden/h.json":         `{"tasks": [{"id": "h", "input": "x"}]}`,
	"_old/o.json":            `{"tasks": [{"id": "o", "input": "x"}]}`,
	"node_modules/m/p.json":  `{"tasks": [{"id": "m", "input": "x"}]}`,
	"vendor/v.json":          `{"tasks": [{"id": "v", "input": "x"}]}`,
	"sub/tsconfig.json":      `{"compilerOptions": {}}`,
	"sub/deeper/schema.json": `[1, 2]`,
	"sub/deeper/str.json":    `"tasks"`,
	"odd/plan[1].json":       `{"tasks": ["x"]}`,
	"globbed.json/x":         "a directory a glob matches",
}

func TestExpand(t *testing.T) {
	tree(t, projectFiles)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"a directory: its plans, and what is not JSON", []string{"."}, []string{"a.json", "broken.json"}},
		{"a named directory", []string{"sub"}, []string{"sub/b.json", "sub/ph.json", "sub/w.json"}},
		{"recursive", []string{"./..."}, []string{"a.json", "broken.json", "odd/plan[1].json", "sub/b.json", "sub/deeper/c.json", "sub/ph.json", "sub/w.json"}},
		{"recursive from a directory", []string{"sub/..."}, []string{"sub/b.json", "sub/deeper/c.json", "sub/ph.json", "sub/w.json"}},
		{"bare ...", []string{"..."}, []string{"a.json", "broken.json", "odd/plan[1].json", "sub/b.json", "sub/deeper/c.json", "sub/ph.json", "sub/w.json"}},
		{"a skipped directory named is entered", []string{"testdata"}, []string{"testdata/t.json"}},
		{"so is one named recursively", []string{"vendor/..."}, []string{"vendor/v.json"}},
		{"named files, whatever they hold", []string{"package.json", "notes.md"}, []string{"package.json", "notes.md"}},
		{"a missing file is left to the reader", []string{"nope.json"}, []string{"nope.json"}},
		{"a glob: files only, sorted", []string{"*.json"}, []string{"a.json", "broken.json", "package.json"}},
		{"a glob in a directory", []string{"sub/*/*.json"}, []string{"sub/deeper/c.json", "sub/deeper/schema.json", "sub/deeper/str.json"}},
		{"each file once, in argument order", []string{"package.json", "*.json", "./a.json", "sub/../a.json", "-"}, []string{"package.json", "a.json", "broken.json", "-"}},
		{"a file whose name holds a glob character", []string{"odd/plan[1].json"}, []string{"odd/plan[1].json"}},
		{"standard input", []string{"-"}, []string{"-"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Expand(tt.args)
			require.NoError(t, err)
			for i := range got {
				got[i] = filepath.ToSlash(got[i])
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestExpandErrors(t *testing.T) {
	dir := tree(t, projectFiles)
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"standard input twice", []string{"-", "a.json", "-"}, "lint: standard input (-) can be read only once"},
		{"a glob matching nothing", []string{"a.json", "*.yml"}, `lint: no file matches "*.yml"`},
		{"a glob matching directories only", []string{"globbed*"}, `lint: no file matches "globbed*"`},
		{"a bad glob", []string{"[.json"}, `lint: bad glob "[.json": syntax error in pattern`},
		{"a directory without plans", []string{"node_modules/m/..", ".hidden/.."}, `lint: no plan under "node_modules/m/.."`},
		{"recursive, without plans", []string{"globbed.json/..."}, `lint: no plan under "globbed.json/..."`},
		{"recursive, not a directory", []string{"a.json/..."}, "lint: a.json is not a directory"},
		{"recursive, missing", []string{filepath.Join(dir, "nope") + "/..."}, "lint: " + filepath.Join(dir, "nope") + " is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Expand(tt.args)
			assert.Nil(t, got)
			assert.EqualError(t, err, tt.err)
			assert.ErrorIs(t, err, ErrArgument)
		})
	}
}

func TestOnlyPlans(t *testing.T) {
	tree(t, projectFiles)
	in := []string{"package.json", "a.json", "notes.md", "-", "broken.json", "sub/tsconfig.json", "nope.json"}
	assert.Equal(t, []string{"a.json", "notes.md", "-", "broken.json", "nope.json"}, OnlyPlans(in))
	assert.Len(t, in, 7, "the argument is not changed")
}

func TestIsPlan(t *testing.T) {
	tree(t, map[string]string{
		"tasks.json":    `{"tasks": []}`,
		"steps.json":    `{"steps": "a"}`,
		"nested.json":   `{"meta": {"tasks": []}}`,
		"array.json":    `[{"tasks": []}]`,
		"number.json":   `12`,
		"empty.json":    ``,
		"broken.json":   `{"tasks": [}`,
		"trailing.json": `{"name": "x"} {"tasks": []}`,
		"prose.json":    "Here is the plan:\n```json\n{\"tasks\": []}\n```",
		"deep.json":     strings.Repeat(`{"a":`, 2000) + "1" + strings.Repeat("}", 2000),
	})
	tests := map[string]bool{
		"tasks.json":    true,
		"steps.json":    true,
		"nested.json":   false, // only the top level counts
		"array.json":    false,
		"number.json":   false,
		"empty.json":    true, // not JSON: linted, to say so
		"broken.json":   true,
		"trailing.json": true,
		"prose.json":    true,
		"deep.json":     false, // valid JSON, of any depth
		"missing.json":  true,  // reviewed, to report that it cannot be read
	}
	for name, want := range tests {
		assert.Equal(t, want, isPlan(name), name)
	}
}
