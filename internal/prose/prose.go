// Package prose formats counts and messages for people reading a
// terminal or a report.
package prose

import (
	"fmt"
	"strings"
)

// Plural counts n of word: "1 task", "3 tasks". The plural adds an s.
func Plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// OneLine puts s on one line: each line break becomes a space, so that a
// message from a plan or a model cannot break a line-oriented report.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// Excerpt is the first line of s, trimmed, cut to n characters with an
// ellipsis when longer: a short mention of a message in a one-line report.
func Excerpt(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
