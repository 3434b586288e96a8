package lint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/critic"
)

func intp(n int) *int { return &n }

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want Config
	}{
		{"empty", "", Config{}},
		{"comment only", "# nothing yet\n", Config{}},
		{"null document", "~\n", Config{}},
		{"null sections", "registry:\nlint:\n", Config{}},
		{"null settings", "lint:\n  enable:\n  fail-on:\n  max-issues:\n  exclude:\n", Config{}},
		{"empty fail-on is unset", "lint:\n  fail-on: \"\"\n", Config{}},
		{"every setting", `registry: reg/workers.yaml
lint:
  enable: [orphan_task]
  disable: [all]
  fail-on: info
  max-issues: 0
  exclude:
    - path: plans/*.json
      task: b
      checks: [disconnected_flow, unknown_key]
    - task: 12
      checks: [all]
`, Config{Registry: "reg/workers.yaml", Lint: Settings{
			Enable: []string{"orphan_task"}, Disable: []string{"all"}, FailOn: critic.GateInfo, MaxIssues: intp(0),
			Exclude: []Exclude{
				{Path: "plans/*.json", Task: "b", Checks: []string{"disconnected_flow", "unknown_key"}},
				{Task: "12", Checks: []string{"all"}},
			},
		}}},
		{"aliases are followed", "lint:\n  disable: &off [orphan_task]\n  exclude:\n    - checks: *off\n", Config{Lint: Settings{
			Disable: []string{"orphan_task"}, Exclude: []Exclude{{Checks: []string{"orphan_task"}}},
		}}},
		{"flow style", `{"registry": "r.yaml", "lint": {"max-issues": 5}}`, Config{Registry: "r.yaml", Lint: Settings{MaxIssues: intp(5)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tt.yaml), "p/.dagent.yaml")
			require.NoError(t, err)
			tt.want.Path = "p/.dagent.yaml"
			assert.Equal(t, &tt.want, c)
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		field string
		err   string // the whole message, of a file named .dagent.yaml
	}{
		{"unknown top-level key", "regsitry: r.yaml\n", "regsitry",
			`.dagent.yaml:1:1: regsitry: unknown key; did you mean "registry"?`},
		{"unknown key, no near one", "lint:\n  colour: true\n", "lint.colour",
			`.dagent.yaml:2:3: lint.colour: unknown key; the keys are enable, disable, fail-on, max-issues, exclude`},
		{"misspelt lint key", "lint:\n  max_issues: 3\n", "lint.max_issues",
			`.dagent.yaml:2:3: lint.max_issues: unknown key; did you mean "max-issues"?`},
		{"misspelt exclude key", "lint:\n  exclude:\n    - check: [all]\n", "lint.exclude.check",
			`.dagent.yaml:3:7: lint.exclude.check: unknown key; did you mean "checks"?`},
		{"top level not a map", "- lint\n", "",
			`.dagent.yaml:1:1: the top level must be a map with the keys registry, lint, not a list`},
		{"lint not a map", "lint: strict\n", "lint",
			`.dagent.yaml:1:7: lint: must be a map with the keys enable, disable, fail-on, max-issues, exclude, not a string`},
		{"registry not a string", "registry: [a, b]\n", "registry",
			`.dagent.yaml:1:11: registry: must be a string, not a list`},
		{"registry a number", "registry: 12\n", "registry",
			`.dagent.yaml:1:11: registry: must be a string, not a number (12); quote it`},
		{"disable not a list", "lint:\n  disable: orphan_task\n", "lint.disable",
			`.dagent.yaml:2:12: lint.disable: must be a list of check names, not a string`},
		{"unknown check", "lint:\n  enable: [orphan_task, nope]\n", "lint.enable",
			`.dagent.yaml:2:25: lint.enable: unknown check "nope"; the checks are listed in docs/lint.md`},
		{"fixed check", "lint:\n  disable:\n    - cycle\n", "lint.disable",
			`.dagent.yaml:3:7: lint.disable: check "cycle" cannot be disabled: a plan with it does not run`},
		{"check not a string", "lint:\n  disable: [{a: b}]\n", "lint.disable",
			`.dagent.yaml:2:13: lint.disable: must be a string, not a map`},
		{"bad fail-on", "lint:\n  fail-on: error\n", "lint.fail-on",
			`.dagent.yaml:2:12: lint.fail-on: unknown level "error": use critical, warning, info or never`},
		{"fail-on not a string", "lint:\n  fail-on: 2\n", "lint.fail-on",
			`.dagent.yaml:2:12: lint.fail-on: must be a string, not a number (2); quote it`},
		{"negative max-issues", "lint:\n  max-issues: -1\n", "lint.max-issues",
			`.dagent.yaml:2:15: lint.max-issues: must be a whole number of 0 or more (0: every issue), not -1`},
		{"max-issues a string", "lint:\n  max-issues: many\n", "lint.max-issues",
			`.dagent.yaml:2:15: lint.max-issues: must be a whole number of 0 or more (0: every issue), not a string`},
		{"max-issues too large", "lint:\n  max-issues: 99999999999\n", "lint.max-issues",
			`.dagent.yaml:2:15: lint.max-issues: must be a whole number of 0 or more (0: every issue), not 99999999999`},
		{"exclude not a list", "lint:\n  exclude: {checks: [all]}\n", "lint.exclude",
			`.dagent.yaml:2:12: lint.exclude: must be a list of rules, each with checks and a path or a task, not a map`},
		{"exclude rule not a map", "lint:\n  exclude: [all]\n", "lint.exclude",
			`.dagent.yaml:2:13: lint.exclude: must be a map with the keys path, task, checks, not a string`},
		{"exclude rule without checks", "lint:\n  exclude:\n    - path: a.json\n", "lint.exclude",
			`.dagent.yaml:3:7: lint.exclude: a rule needs checks: the checks it silences, or [all]`},
		{"exclude rule with empty checks", "lint:\n  exclude:\n    - path: a.json\n      checks: []\n", "lint.exclude",
			`.dagent.yaml:3:7: lint.exclude: a rule needs checks: the checks it silences, or [all]`},
		{"exclude of a fixed check", "lint:\n  exclude:\n    - checks: [missing_dependency]\n", "lint.exclude.checks",
			`.dagent.yaml:3:16: lint.exclude.checks: check "missing_dependency" cannot be disabled: a plan with it does not run`},
		{"bad exclude pattern", "lint:\n  exclude:\n    - path: \"plans/[.json\"\n      checks: [all]\n", "lint.exclude.path",
			`.dagent.yaml:3:13: lint.exclude.path: bad pattern "plans/[.json": syntax error in pattern`},
		{"task a list", "lint:\n  exclude:\n    - task: [a]\n      checks: [all]\n", "lint.exclude.task",
			`.dagent.yaml:3:13: lint.exclude.task: must be a string, not a list`},
		{"duplicate key", "lint:\n  disable: [orphan_task]\n  disable: [all]\n", "lint.disable",
			`.dagent.yaml:3:3: lint.disable: the key appears twice (first at line 2)`},
		{"merge key", "base: &b {fail-on: info}\nlint:\n  <<: *b\n", "base",
			`.dagent.yaml:1:1: base: unknown key; the keys are registry, lint`},
		{"merge key in lint", "lint:\n  <<: {fail-on: info}\n", "lint",
			`.dagent.yaml:2:3: lint: merge keys ("<<") are not supported; write the settings out`},
		{"key not a string", "lint:\n  [a]: b\n", "lint",
			`.dagent.yaml:2:3: lint: a key must be a string, not a list`},
		{"syntax error", "lint:\n  disable: [orphan_task\n", "",
			`.dagent.yaml:2: invalid YAML: did not find expected ',' or ']'`},
		{"tab indentation", "lint:\n\tdisable: []\n", "",
			`.dagent.yaml:2: invalid YAML: found character that cannot start any token`},
		{"two documents", "lint: {}\n---\nregistry: r.yaml\n", "",
			`.dagent.yaml:2:1: a second YAML document starts here; a configuration is one document`},
		{"too large", "#" + strings.Repeat("x", maxConfigBytes), "",
			`.dagent.yaml: the file is larger than the 1024 KiB a configuration may take`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tt.yaml), ".dagent.yaml")
			require.Error(t, err)
			assert.Nil(t, c)
			assert.ErrorIs(t, err, ErrInvalidConfig)
			var ce *ConfigError
			require.True(t, errors.As(err, &ce))
			assert.Equal(t, tt.field, ce.Field)
			assert.Equal(t, tt.err, err.Error())
		})
	}
}

// Without a file name, an error starts at its position.
func TestConfigErrorWithoutFile(t *testing.T) {
	_, err := ParseConfig([]byte("lint:\n  fail-on: error\n"), "")
	assert.EqualError(t, err, `2:12: lint.fail-on: unknown level "error": use critical, warning, info or never`)
	_, err = ParseConfig([]byte("lint: [\n"), "")
	assert.EqualError(t, err, `1: invalid YAML: did not find expected node content`)
}

func TestFindConfig(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	require.NoError(t, os.MkdirAll(deep, 0o755))

	c, err := FindConfig(deep)
	require.NoError(t, err)
	assert.Nil(t, c, "no configuration file anywhere above")

	require.NoError(t, os.WriteFile(filepath.Join(root, "a", ConfigName), []byte("registry: r.yaml\n"), 0o600))
	c, err = FindConfig(deep)
	require.NoError(t, err)
	require.NotNil(t, c)
	assert.Equal(t, filepath.Join(root, "a", ConfigName), c.Path, "the nearest above, by its absolute path")
	assert.Equal(t, filepath.Join(root, "a"), c.Dir())

	// The nearer file wins, and its errors are the lookup's.
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "b", ConfigName), []byte("lint:\n  disabled: []\n"), 0o600))
	_, err = FindConfig(deep)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), filepath.Join(root, "a", "b", ConfigName)+":2:3: lint.disabled:")

	// Relative directories are looked up from the working directory.
	t.Chdir(filepath.Join(root, "a"))
	c, err = FindConfig(".")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "a", ConfigName), c.Path)
}

func TestLoadConfig(t *testing.T) {
	_, err := LoadConfig(filepath.Join(t.TempDir(), ConfigName))
	assert.ErrorIs(t, err, os.ErrNotExist)

	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, ConfigName), 0o755))
	_, err = FindConfig(dir)
	assert.Error(t, err, "a directory named like the file is not a configuration")
	assert.NotErrorIs(t, err, ErrInvalidConfig)
}

func TestConfigDir(t *testing.T) {
	assert.Equal(t, ".", (&Config{}).Dir(), "a configuration that is not a file is relative to the working directory")
	assert.Equal(t, "p", (&Config{Path: "p/.dagent.yaml"}).Dir())
}
