// Package prose formats counts and messages for people reading a
// terminal or a report, and keeps untrusted text in them from acting on
// the terminal.
package prose

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
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

// Visible makes s safe to print on a terminal, where text from plans,
// models and workers must not move the cursor, retitle the window, write
// the clipboard or reorder what is shown: each control character but tab
// and line feed (C0, DEL, C1, ESC among them), each format character
// (bidirectional overrides and isolates, zero-width spaces and joiners,
// the byte order mark) and each line or paragraph separator is written as
// its JSON escape, such as \u001b or \u202e (a character beyond U+FFFF as
// its UTF-16 pair, \udb40\udc01), and each byte of invalid UTF-8 as \xff.
// A carriage return that ends a line ("\r\n") is kept.
//
// The escapes are JSON's, so that a JSON document made visible stays valid
// JSON with the same values: JSON encoders escape the C0 controls
// themselves and leave the others as they are.
func Visible(s string) string {
	i := firstHidden(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			b.WriteByte('\r')
		case hidden(r):
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstHidden is the index of the first byte of s that [Visible] may have
// to escape, or len(s).
func firstHidden(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || hidden(r) {
			return i
		}
		i += size
	}
	return len(s)
}

// hidden reports whether r acts on a terminal or its layout rather than
// showing: a control character other than tab and line feed, a format
// character, a line or paragraph separator.
func hidden(r rune) bool {
	if r == '\t' || r == '\n' {
		return false
	}
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// Writer writes to an underlying writer what it is given made [Visible]:
// put at the boundary of a program's text output, it keeps every message
// it prints safe for the terminal. A character split between two writes
// is held back until the write that completes it, or [Writer.Flush]. A
// Writer is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	held []byte
}

// NewWriter returns a [Writer] writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p made visible, and returns len(p) unless the underlying
// writer failed.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data := p
	if len(w.held) > 0 {
		data = append(w.held, p...)
	}
	cut := incompleteTail(data)
	out := Visible(string(data[:cut]))
	w.held = append(w.held[:0:0], data[cut:]...)
	if _, err := io.WriteString(w.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held back, an incomplete character, as [Visible]
// writes invalid UTF-8.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) == 0 {
		return nil
	}
	out := Visible(string(w.held))
	w.held = nil
	_, err := io.WriteString(w.w, out)
	return err
}

// Unwrap returns the underlying writer, for output that is safe already
// and must reach it as it is, such as colour codes around visible text.
func (w *Writer) Unwrap() io.Writer { return w.w }

// incompleteTail is where the end of data that a later write may complete
// begins — a carriage return, which a line feed may follow, or the start
// of a character whose bytes have not all come — or len(data).
func incompleteTail(data []byte) int {
	n := len(data)
	if n > 0 && data[n-1] == '\r' {
		return n - 1
	}
	for i := n - 1; i >= 0 && i >= n-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				return i
			}
			break
		}
	}
	return n
}
