// Package yamlnode helps the readers of dagent's YAML files, which walk
// the node tree so that every error names a line: what go-yaml's syntax
// errors say and where, what kind of value a node is, and which key a
// misspelt one meant.
package yamlnode

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dagent-dev/dagent/internal/edit"
)

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parserProblems are the messages of go-yaml's parser, as opposed to its
// scanner. go-yaml counts the lines of parser errors from 0, and leaves out
// line 0.
var parserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected <stream-start>",
	"did not find expected key",
	"did not find expected node content",
	"found duplicate %TAG directive",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// Syntax returns the line, counted from 1 (0 when unknown), and the
// message of err, a syntax error go-yaml returned for data.
func Syntax(err error, data []byte) (line int, msg string) {
	msg = err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	if slices.Contains(parserProblems, msg) {
		// At the end of the input, go-yaml can report the line after the
		// last.
		lines := bytes.Count(data, []byte("\n"))
		if !bytes.HasSuffix(data, []byte("\n")) {
			lines++
		}
		line = min(line+1, lines)
	}
	return line, msg
}

// Describe says what kind of value n is, for messages: "a map", "a
// number (3)".
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!str":
			return "a string"
		case "!!int", "!!float":
			return "a number (" + n.Value + ")"
		case "!!bool":
			return "a boolean (" + n.Value + ")"
		case "!!null":
			return "null"
		case "!!timestamp":
			return "a timestamp (" + n.Value + ")"
		default:
			return "a value tagged " + tag
		}
	}
	return "an alias"
}

// KeyHint suggests the known key closest to an unknown one, or lists
// them: "; did you mean \"timeout\"?".
func KeyHint(key string, known []string) string {
	if best, ok := edit.Closest(key, known); ok {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	if len(known) == 1 {
		return fmt.Sprintf("; the only key here is %q", known[0])
	}
	return "; the keys are " + strings.Join(known, ", ")
}
