// Package devserver finds the temporal CLI and starts a Temporal dev
// server from it, for the module's tests and benchmarks: one finder, so
// that every test looks for the CLI in the same places and skips with the
// same advice.
package devserver

import (
	"context"
	"go/build"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
)

// Install is the command that builds the temporal CLI the tests need.
const Install = "CGO_ENABLED=0 go install github.com/temporalio/cli/cmd/temporal@v1.5.1"

// Missing is what a test that needs the CLI says when it skips without
// it.
const Missing = "no temporal CLI: set DAGENT_TEMPORAL_CLI, put temporal on PATH, or " + Install

// CLI returns the path of the temporal CLI: $DAGENT_TEMPORAL_CLI, else
// temporal on PATH, else the one go install puts in $GOPATH/bin. Empty
// when there is none.
func CLI() string {
	if p := os.Getenv("DAGENT_TEMPORAL_CLI"); p != "" {
		return p
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		gopath = build.Default.GOPATH
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "temporal")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Start starts a dev server from the CLI at cli, its clients logging to
// logger and its own output, errors only, going to out: never to the
// test process's standard streams, and never a download of the CLI. The
// caller stops it.
func Start(ctx context.Context, cli string, logger log.Logger, out io.Writer) (*testsuite.DevServer, error) {
	return testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath:  cli,
		ClientOptions: &client.Options{Logger: logger},
		LogLevel:      "error",
		Stdout:        out,
		Stderr:        out,
	})
}
