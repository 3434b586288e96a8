package main

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersionOf(t *testing.T) {
	vcs := func(main string, settings ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/dagent-dev/dagent", Version: main}}
		for i := 0; i+1 < len(settings); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return info
	}
	tests := []struct {
		name  string
		stamp string
		info  *debug.BuildInfo
		want  string
	}{
		{"make build's stamp wins", "v1.2.3-4-gabcdef0-dirty", vcs("v1.2.0"), "v1.2.3-4-gabcdef0-dirty"},
		{"go install of a release", "", vcs("v1.2.0"), "v1.2.0"},
		{"go build of a checkout: the pseudo-version", "", vcs("v0.0.0-20261124142552-c2a0ba14c3d9+dirty", "vcs.revision", "c2a0ba14c3d99c284138254fc2b7410997065410"), "v0.0.0-20261124142552-c2a0ba14c3d9+dirty"},
		{"no module version: the revision", "", vcs("(devel)", "vcs.revision", "c2a0ba14c3d99c284138254fc2b7410997065410", "vcs.modified", "false"), "c2a0ba14c3d9"},
		{"no module version, changed checkout", "", vcs("(devel)", "vcs.revision", "c2a0ba14c3d99c284138254fc2b7410997065410", "vcs.modified", "true"), "c2a0ba14c3d9-dirty"},
		{"nothing recorded", "", vcs("(devel)"), "devel"},
		{"no build info", "", nil, "devel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, versionOf(tt.stamp, tt.info))
		})
	}
}

func TestVersionCommandAndFlag(t *testing.T) {
	code, byCommand, stderr := dagent(t, "", "version")
	require.Equal(t, exitOK, code, stderr)
	assert.True(t, strings.HasPrefix(byCommand, "dagent "+buildVersion()+" go"), byCommand)
	code, byFlag, stderr := dagent(t, "", "--version")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, byCommand, byFlag)
}
