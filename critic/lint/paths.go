package lint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dagent-dev/dagent/critic/report"
	"github.com/dagent-dev/dagent/plan"
)

// ErrArgument is matched by the errors of [Expand] for an argument that
// names no file to lint, or names files in a way it cannot read.
var ErrArgument = errors.New("bad argument")

// argErrorf is an error of an argument of Expand, wrapping err, which
// may be nil.
func argErrorf(err error, format string, args ...any) error {
	errs := []error{ErrArgument}
	if err != nil {
		errs = append(errs, err)
	}
	return errorf(errs, format, args...)
}

// skipDirs are directories a recursive argument (dir/...) does not enter,
// beside those whose names start with "." or "_", as go build does.
var skipDirs = []string{"testdata", "node_modules", "vendor"}

// planKeys are the top-level keys of a JSON object that make it a plan.
var planKeys = []string{"tasks", "steps", "workflow", "phases", "plan"}

// Expand returns the files args name, to lint in argument order, each
// once. An argument is
//   - a file, whatever its name;
//   - [report.Stdin], standard input, at most once;
//   - a glob ("plans/*.json"; ** is not special), expanded here so that
//     quoted globs work alike on every shell: the files it matches, sorted,
//     or the file of that name when it matches none;
//   - a directory: its *.json files that look like plans;
//   - DIR/... or ./...: the *.json files that look like plans under DIR,
//     skipping testdata, vendor, node_modules and the directories whose
//     names start with "." or "_".
//
// A *.json file looks like a plan unless it is valid JSON whose top level
// has no task list ("tasks", "steps", "workflow", "phases" or "plan"):
// package.json is skipped, while a plan with a syntax error is linted, as
// it is what lint is for. A glob that matches nothing and a directory
// without plans are errors that match [ErrArgument], as is a second "-".
func Expand(args []string) ([]string, error) {
	var paths []string
	seen := make(map[string]bool)
	add := func(p string) {
		key := p
		if p != report.Stdin {
			key = filepath.Clean(p)
		}
		if !seen[key] {
			seen[key] = true
			paths = append(paths, p)
		}
	}
	stdin := false
	for _, arg := range args {
		switch {
		case arg == report.Stdin:
			if stdin {
				return nil, argErrorf(nil, "lint: standard input (-) can be read only once")
			}
			stdin = true
			add(arg)
		case arg == "..." || strings.HasSuffix(arg, "/..."):
			if err := addDir(strings.TrimSuffix(strings.TrimSuffix(arg, "..."), "/"), true, arg, add); err != nil {
				return nil, err
			}
		case isDir(arg):
			if err := addDir(arg, false, arg, add); err != nil {
				return nil, err
			}
		case !hasGlobMeta(arg):
			add(arg)
		default:
			if err := addGlob(arg, add); err != nil {
				return nil, err
			}
		}
	}
	return paths, nil
}

// addGlob adds the files the glob arg matches, or the file arg names
// when it matches none.
func addGlob(arg string, add func(string)) error {
	matches, err := filepath.Glob(arg)
	if err != nil {
		return argErrorf(err, "lint: bad glob %q: %v", arg, err)
	}
	n := 0
	for _, m := range matches {
		// A glob such as plans/* also matches directories; only files
		// are plans.
		if isDir(m) {
			continue
		}
		add(m)
		n++
	}
	if n > 0 {
		return nil
	}
	// A file whose name holds a glob character is still a file.
	if _, err := os.Lstat(arg); err == nil {
		add(arg)
		return nil
	}
	return argErrorf(nil, "lint: no file matches %q", arg)
}

// addDir adds the plans of dir ("" for the working directory), with
// recursive those of its subdirectories too; arg, as given, names it in
// errors. A directory without a plan is an error, as a glob that matches
// nothing is.
func addDir(dir string, recursive bool, arg string, add func(string)) error {
	if dir == "" {
		dir = "."
	}
	if !isDir(dir) {
		return argErrorf(nil, "lint: %s is not a directory", dir)
	}
	found, err := planFiles(dir, recursive)
	if err != nil {
		return fmt.Errorf("lint: %w", err)
	}
	if len(found) == 0 {
		return argErrorf(nil, "lint: no plan under %q", arg)
	}
	for _, p := range found {
		add(p)
	}
	return nil
}

// OnlyPlans returns paths without the *.json files that do not look like
// plans, as [Expand] skips them in directories: for a hook that is handed
// every changed JSON file. Other files, and standard input, are kept.
func OnlyPlans(paths []string) []string {
	return slices.DeleteFunc(slices.Clone(paths), func(p string) bool {
		return p != report.Stdin && filepath.Ext(p) == ".json" && !isPlan(p)
	})
}

// isDir reports whether path is a directory.
func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// hasGlobMeta reports whether path holds a character filepath.Match
// treats specially.
func hasGlobMeta(path string) bool {
	magic := `*?[`
	if filepath.Separator != '\\' {
		magic = `*?[\`
	}
	return strings.ContainsAny(path, magic)
}

// planFiles lists the plans of dir: its *.json files that look like
// plans, and with recursive those of its subdirectories too.
func planFiles(dir string, recursive bool) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if path == dir {
				return nil
			}
			name := e.Name()
			if !recursive || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || slices.Contains(skipDirs, name) {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) == ".json" && isPlan(path) {
			paths = append(paths, path)
		}
		return nil
	})
	return paths, err
}

// isPlan reports whether the JSON file at path looks like a plan.
func isPlan(path string) bool {
	info, err := os.Stat(path)
	if err != nil || info.Size() > int64(plan.DefaultLimits().MaxPlanBytes) {
		// Linted, to be reported: it cannot be read, or is too large.
		return true
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return true
	}
	if !json.Valid(data) {
		// A plan with a syntax error is what lint is for.
		return true
	}
	// Only the top level's keys are read, of JSON of any depth.
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	for _, k := range planKeys {
		if _, ok := top[k]; ok {
			return true
		}
	}
	return false
}
