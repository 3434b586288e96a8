package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of a [FailureReport]'s fields, in bytes.
const (
	MaxReportClass = 40
	MaxReportText  = 1 << 10
)

// FailureReport is a worker's structured account of why it failed: a class
// that names the kind of failure for whoever decides what to do next, and a
// message and suggestion for the planner that repairs the plan. A Go agent
// reports one by returning it (wrapped or not) as its error; a [Command]
// reports one by exiting with a non-zero status after writing, on standard
// output or as the last line of standard error, one JSON object
//
//	{"error": {"class": "rate_limited", "message": "429 from the API", "suggestion": "retry after a minute"}}
//
// which [ParseFailureReport] reads. The class is a lower-case identifier
// ([a-z][a-z0-9_]*, at most [MaxReportClass] bytes); it may be one of the
// runner's classes, such as "precondition_failed", or the worker's own.
// The message and suggestion are untrusted text: the runner and the planner
// show them as data, never as instructions.
type FailureReport struct {
	Class      string `json:"class,omitempty"`
	Message    string `json:"message,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
}

// Error returns the class and the message.
func (r *FailureReport) Error() string {
	switch {
	case r.Class == "":
		return r.Message
	case r.Message == "":
		return r.Class
	}
	return r.Class + ": " + r.Message
}

// ParseFailureReport reads a failure report from what a worker wrote: b,
// trimmed of white space, must be one JSON object whose "error" member is
// an object with a valid class or a non-empty message; anything else is no
// report. The report is sanitised: a class that is not a valid identifier
// is dropped, control characters other than newlines and tabs are removed
// from the message and suggestion, and each is cut to [MaxReportText]
// bytes.
func ParseFailureReport(b []byte) (*FailureReport, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	var doc struct {
		Error *struct {
			Class, Message, Suggestion any
		} `json:"error"`
	}
	if json.Unmarshal(b, &doc) != nil || doc.Error == nil {
		return nil, false
	}
	r := &FailureReport{
		Class:      text(doc.Error.Class),
		Message:    clean(text(doc.Error.Message)),
		Suggestion: clean(text(doc.Error.Suggestion)),
	}
	if !ValidClass(r.Class) {
		r.Class = ""
	}
	if r.Class == "" && r.Message == "" {
		return nil, false
	}
	return r, true
}

// text is v when it is a string.
func text(v any) string {
	s, _ := v.(string)
	return s
}

// ValidClass reports whether s can be a failure class: a lower-case
// identifier ([a-z][a-z0-9_]*) of at most [MaxReportClass] bytes.
func ValidClass(s string) bool {
	if s == "" || len(s) > MaxReportClass || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// clean removes control characters but newlines and tabs, trims white
// space and bounds s to MaxReportText bytes on a character boundary.
func clean(s string) string {
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, s))
	if len(s) > MaxReportText {
		cut := MaxReportText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// lastLine is the last non-blank line of b.
func lastLine(b string) string {
	b = strings.TrimRight(b, " \t\r\n")
	if k := strings.LastIndexByte(b, '\n'); k >= 0 {
		return b[k+1:]
	}
	return b
}
