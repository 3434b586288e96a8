// Package integration holds the integration suite of dagent on Temporal:
// its tests start a Temporal dev server from the temporal CLI, build the
// dagent-temporal command, run worker processes of it on the registry of
// testdata, and drive runs with the command as a user would. They skip
// under -short and when no temporal CLI is found ($DAGENT_TEMPORAL_CLI,
// PATH, $GOPATH/bin). The package has no API.
package integration
