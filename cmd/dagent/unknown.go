package main

import (
	"fmt"

	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/plan"
	"github.com/spf13/cobra"
)

// reportUnknown prints the keys of the plan at path that Parse dropped on
// stderr, one a line, with where they are, whose they are and the key
// each most likely misspells:
//
//	plan.json:3:53: task b: key "depend_on" is not part of the plan format and was ignored; did you mean "depends_on"? [unknown_key]
//
// The check's name is lint's, whose report says the same.
func reportUnknown(cmd *cobra.Command, path string, keys []plan.UnknownKey) {
	for _, u := range keys {
		switch {
		case path == "-":
		case u.Pos.IsValid():
			fmt.Fprint(cmd.ErrOrStderr(), path, ":")
		default:
			fmt.Fprint(cmd.ErrOrStderr(), path, ": ")
		}
		fmt.Fprintln(cmd.ErrOrStderr(), u.String(), "[unknown_key]")
	}
}

// nearMisses returns how many of keys misspell a key of the plan format.
func nearMisses(keys []plan.UnknownKey) int {
	n := 0
	for _, u := range keys {
		if u.Suggestion != "" {
			n++
		}
	}
	return n
}

// refuseNearMisses is run's rule for unknown keys: every one is reported,
// and a near miss stops the run before it starts, unless allowed. A
// misspelt key means the plan runs otherwise than its author wrote it (a
// dependency lost, a task made critical again), which no later step can
// notice; a key that misspells nothing is a note, and the run goes on.
func refuseNearMisses(cmd *cobra.Command, path string, keys []plan.UnknownKey, allow bool) error {
	reportUnknown(cmd, path, keys)
	n := nearMisses(keys)
	if n == 0 || allow {
		return nil
	}
	what := "1 unknown key is a near miss of a known key"
	if n > 1 {
		what = fmt.Sprintf("%d unknown keys are near misses of known keys", n)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "dagent: not run: %s, so the plan would not run as written; fix the plan, or pass --allow-unknown-keys to run it without %s\n", what, pronoun(n))
	return exitCode(exitInvalid)
}

// refuseDrop is fmt -w's rule: a file is not rewritten without keys it
// has, unless asked.
func refuseDrop(cmd *cobra.Command, path string, keys []plan.UnknownKey, drop bool) error {
	reportUnknown(cmd, path, keys)
	if len(keys) == 0 || drop {
		return nil
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "dagent: not written: fmt -w would drop %s from %s; fix the plan, or pass --drop-unknown to drop %s\n",
		prose.Plural(len(keys), "unknown key"), path, pronoun(len(keys)))
	return exitCode(exitInvalid)
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
