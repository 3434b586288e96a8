package main

import (
	"cmp"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// actionFile is what the test reads of action.yml.
type actionFile struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID   string            `yaml:"id"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

// TestAction runs the lint step of the repository's action.yml, the
// composite GitHub Action, with bash and a dagent built from this
// checkout: it writes the SARIF report, annotates and records the exit
// status for the step that fails the job after the upload.
func TestAction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dagent; skipped with -short")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the action's step with")
	}
	data, err := os.ReadFile("../../action.yml")
	require.NoError(t, err)
	var action actionFile
	require.NoError(t, yaml.Unmarshal(data, &action))
	require.Equal(t, "composite", action.Runs.Using)

	var install, upload, lint string
	var lintEnv map[string]string
	for _, s := range action.Runs.Steps {
		switch {
		case strings.Contains(s.Run, "go install"):
			install = s.Run
		case strings.HasPrefix(s.Uses, "github/codeql-action/upload-sarif@"):
			upload = s.With["sarif_file"]
		case s.ID == "lint":
			lint, lintEnv = s.Run, s.Env
		}
	}
	assert.Contains(t, install, "go install \"github.com/dagent-dev/dagent/cmd/dagent@${VERSION}\"")
	assert.Equal(t, "${{ inputs.sarif-file }}", upload)
	require.NotEmpty(t, lint)

	bin := filepath.Dir(binary(t))

	work := tree(t, map[string]string{
		"plans/good.json": `{"tasks": [{"id": "a", "input": "List the files of the repository"}]}`,
		"plans/bad.json":  `{"tasks": [{"id": "a", "input": "x", "depends_on": ["a"]}]}`,
		"package.json":    `{"name": "web"}`,
	})
	run := func(inputs map[string]string) (string, map[string]string, string) {
		t.Helper()
		ghOut := filepath.Join(t.TempDir(), "output")
		cmd := exec.Command(bash, "--noprofile", "--norc", "-eo", "pipefail", "-c", lint)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GITHUB_OUTPUT="+ghOut, registryEnv+"=")
		for name, expr := range lintEnv {
			input := strings.TrimSuffix(strings.TrimPrefix(expr, "${{ inputs."), " }}")
			v, ok := inputs[input]
			if !ok {
				v = action.Inputs[input].Default
			}
			cmd.Env = append(cmd.Env, name+"="+v)
		}
		stdout, err := cmd.Output()
		require.NoError(t, err, "the lint step itself never fails: %s", stdout)
		written, err := os.ReadFile(ghOut)
		require.NoError(t, err)
		outputs := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(written)), "\n") {
			k, v, _ := strings.Cut(line, "=")
			outputs[k] = v
		}
		sarif, err := os.ReadFile(filepath.Join(work, cmp.Or(inputs["sarif-file"], action.Inputs["sarif-file"].Default)))
		require.NoError(t, err)
		return string(stdout), outputs, string(sarif)
	}

	annotations, outputs, sarif := run(nil)
	assert.Equal(t, "1", outputs["status"], "a critical issue fails the job, after the upload")
	assert.Contains(t, annotations, "::error file=plans/bad.json,line=1,col=12,title=self_dependency::")
	var doc struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(sarif), &doc), sarif)
	assert.Equal(t, "2.1.0", doc.Version)
	require.Len(t, doc.Runs, 1)
	require.Len(t, doc.Runs[0].Results, 1)
	assert.Equal(t, "self_dependency", doc.Runs[0].Results[0].RuleID)

	_, outputs, _ = run(map[string]string{"plans": "plans/good.json", "sarif-file": "good.sarif"})
	assert.Equal(t, "0", outputs["status"])
	_, outputs, _ = run(map[string]string{"fail-on": "never"})
	assert.Equal(t, "0", outputs["status"])
}
