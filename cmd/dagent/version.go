package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time: go build -ldflags "-X main.version=v1.2.3"
// (make build stamps the output of git describe).
var version = ""

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of dagent",
		Long: `Print the version of dagent, the Go release that built it and the platform,
as dagent --version does. The version is the one make build stamped (git
describe), else the module version go install recorded (v1.2.3, or a
pseudo-version that names the commit, +dirty when the checkout had
changes), else the commit go build recorded, else devel. SARIF reports of
dagent lint carry the same version.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
}

// versionLine is what dagent version and dagent --version print.
func versionLine() string {
	return fmt.Sprintf("dagent %s %s %s/%s", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// buildVersion is the version of this binary: see versionOf.
func buildVersion() string {
	info, _ := debug.ReadBuildInfo()
	return versionOf(version, info)
}

// versionOf is the link-time version stamp, else the main module's version
// in info (go install's, or the pseudo-version go build derives from the
// checkout), else the VCS revision go build recorded, with "-dirty" when
// the checkout had changes, else "devel".
func versionOf(stamp string, info *debug.BuildInfo) string {
	if stamp != "" {
		return stamp
	}
	if info == nil {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision == "" {
		return "devel"
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if modified == "true" {
		revision += "-dirty"
	}
	return revision
}
