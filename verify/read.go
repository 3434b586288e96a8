package verify

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// kind is the kind of a form the reader produces.
type kind uint8

const (
	kList kind = iota
	kVector
	kMap
	kString
	kInt
	kFloat
	kBigInt
	kKeyword
	kSymbol
	kNil
	kBool
	kRegex
)

// form is one datum of the predicate's source, with where it starts and ends.
type form struct {
	kind     kind
	pos, end int    // byte offsets of the form in the source
	s        string // symbol or keyword name, string or regex text, big integer digits
	i        int64
	f        float64
	b        bool
	items    []form // list, vector and map elements
	anon     bool   // a list read from #( ... )
}

// maxFormDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxFormDepth = 500

type reader struct {
	src   string
	pos   int
	depth int
	// anonDepth is how many #( ) forms enclose the reader; they don't nest.
	anonDepth int
}

// read reads every form of src.
func read(src string) ([]form, error) {
	r := &reader{src: src}
	var forms []form
	for {
		r.space()
		if r.pos >= len(r.src) {
			return forms, nil
		}
		f, err := r.form()
		if err != nil {
			return nil, err
		}
		forms = append(forms, f)
	}
}

func (r *reader) errorf(pos int, format string, args ...any) error {
	return newCompileError(r.src, pos, fmt.Sprintf(format, args...))
}

// space skips whitespace, commas (whitespace in Clojure) and ; comments.
func (r *reader) space() {
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		switch {
		case c == ';':
			if i := strings.IndexByte(r.src[r.pos:], '\n'); i >= 0 {
				r.pos += i + 1
			} else {
				r.pos = len(r.src)
			}
		case c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
			r.pos++
		case c >= utf8.RuneSelf:
			ch, size := utf8.DecodeRuneInString(r.src[r.pos:])
			if !unicode.IsSpace(ch) {
				return
			}
			r.pos += size
		default:
			return
		}
	}
}

func (r *reader) form() (form, error) {
	start := r.pos
	c := r.src[r.pos]
	switch c {
	case '(':
		return r.coll(kList, ')', start, 1)
	case '[':
		return r.coll(kVector, ']', start, 1)
	case '{':
		f, err := r.coll(kMap, '}', start, 1)
		if err == nil && len(f.items)%2 != 0 {
			return form{}, r.errorf(start, "a map needs an even number of forms (key value pairs), found %d", len(f.items))
		}
		return f, err
	case ')', ']', '}':
		return form{}, r.errorf(start, "unexpected %q: nothing is open here", c)
	case '"':
		s, err := r.str()
		return form{kind: kString, pos: start, end: r.pos, s: s}, err
	case '#':
		if strings.HasPrefix(r.src[r.pos:], "#(") {
			if r.anonDepth > 0 {
				return form{}, r.errorf(start, "#( ) forms cannot be nested; use (fn [x] ...) for the inner one")
			}
			r.anonDepth++
			f, err := r.coll(kList, ')', start, 2)
			r.anonDepth--
			f.anon = true
			return f, err
		}
		if strings.HasPrefix(r.src[r.pos:], `#"`) {
			r.pos++
			s, err := r.rawStr()
			return form{kind: kRegex, pos: start, end: r.pos, s: s}, err
		}
		return form{}, r.errorf(start, "unsupported reader macro %q; only #( ) and #\"regex\" are known", r.token())
	case '\'', '`', '~', '@', '^':
		return form{}, r.errorf(start, "unsupported reader macro %q: quoting is not part of the predicate language", string(c))
	case ':':
		tok := r.token()
		if len(tok) < 2 {
			return form{}, r.errorf(start, "a keyword needs a name after ':'")
		}
		if tok[1] == ':' {
			return form{}, r.errorf(start, "invalid keyword %s: auto-resolved keywords (::k) are not part of the predicate language", tok)
		}
		return form{kind: kKeyword, pos: start, end: r.pos, s: tok[1:]}, nil
	}
	tok := r.token()
	if tok == "" {
		ch, _ := utf8.DecodeRuneInString(r.src[r.pos:])
		return form{}, r.errorf(start, "unexpected character %q", ch)
	}
	f := form{pos: start, end: r.pos}
	switch {
	case tok == "nil":
		f.kind = kNil
	case tok == "true" || tok == "false":
		f.kind, f.b = kBool, tok == "true"
	case isNumberStart(tok):
		return r.number(tok, f)
	default:
		f.kind, f.s = kSymbol, tok
	}
	return f, nil
}

// coll reads a list, vector or map whose opener is skip bytes long.
func (r *reader) coll(k kind, closer byte, start, skip int) (form, error) {
	if r.depth >= maxFormDepth {
		return form{}, r.errorf(start, "forms nested deeper than %d levels", maxFormDepth)
	}
	r.depth++
	defer func() { r.depth-- }()
	r.pos += skip
	f := form{kind: k, pos: start}
	for {
		r.space()
		if r.pos >= len(r.src) {
			return form{}, r.errorf(start, "unclosed %q: expected %q before the end of the predicate", r.src[start:start+skip], closer)
		}
		if c := r.src[r.pos]; c == closer {
			r.pos++
			f.end = r.pos
			return f, nil
		} else if c == ')' || c == ']' || c == '}' {
			return form{}, r.errorf(r.pos, "unexpected %q: the %q opened at %s is not closed", c, r.src[start:start+skip], lineCol(r.src, start))
		}
		item, err := r.form()
		if err != nil {
			return form{}, err
		}
		f.items = append(f.items, item)
	}
}

// token reads a symbol, keyword or number: everything up to a delimiter.
func (r *reader) token() string {
	start := r.pos
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		if c == '(' || c == ')' || c == '[' || c == ']' || c == '{' || c == '}' || c == '"' || c == ';' || c == ',' ||
			c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\'' || c == '`' || c == '~' || c == '@' || c == '^' {
			break
		}
		if c >= utf8.RuneSelf {
			ch, size := utf8.DecodeRuneInString(r.src[r.pos:])
			if unicode.IsSpace(ch) {
				break
			}
			r.pos += size
			continue
		}
		r.pos++
	}
	return r.src[start:r.pos]
}

func isNumberStart(tok string) bool {
	if tok[0] == '-' || tok[0] == '+' {
		tok = tok[1:]
	}
	return tok != "" && tok[0] >= '0' && tok[0] <= '9'
}

func (r *reader) number(tok string, f form) (form, error) {
	if i, err := strconv.ParseInt(tok, 10, 64); err == nil {
		f.kind, f.i = kInt, i
		return f, nil
	}
	// Integers too large for 64 bits keep every digit, as JSON numbers do,
	// so that they compare exactly.
	if t, ok := bigIntegerText(tok); ok {
		f.kind, f.s = kBigInt, t
		return f, nil
	}
	if strings.ContainsAny(tok, ".eE") && !strings.ContainsAny(tok, "xX_") {
		if v, err := strconv.ParseFloat(tok, 64); err == nil {
			f.kind, f.f = kFloat, v
			return f, nil
		}
	}
	return form{}, r.errorf(f.pos, "invalid number %q", tok)
}

// str reads a string with Clojure's escapes.
func (r *reader) str() (string, error) {
	start := r.pos
	r.pos++
	var b strings.Builder
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		switch c {
		case '"':
			r.pos++
			return b.String(), nil
		case '\\':
			if r.pos+1 >= len(r.src) {
				return "", r.errorf(start, "unterminated string")
			}
			e := r.src[r.pos+1]
			r.pos += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case '"', '\\':
				b.WriteByte(e)
			case 'u':
				if r.pos+4 > len(r.src) {
					return "", r.errorf(r.pos-2, `invalid \u escape: expected four hexadecimal digits`)
				}
				v, err := strconv.ParseUint(r.src[r.pos:r.pos+4], 16, 32)
				if err != nil {
					return "", r.errorf(r.pos-2, `invalid \u escape: expected four hexadecimal digits`)
				}
				b.WriteRune(rune(v))
				r.pos += 4
			default:
				return "", r.errorf(r.pos-2, `invalid escape \%c in string`, e)
			}
		default:
			b.WriteByte(c)
			r.pos++
		}
	}
	return "", r.errorf(start, "unterminated string: expected a closing '\"'")
}

// rawStr reads the text of a regex literal: escapes stay as written, except
// that \" is a quote.
func (r *reader) rawStr() (string, error) {
	start := r.pos
	r.pos++
	var b strings.Builder
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		switch {
		case c == '"':
			r.pos++
			return b.String(), nil
		case c == '\\' && r.pos+1 < len(r.src):
			if r.src[r.pos+1] == '"' {
				b.WriteByte('"')
			} else {
				b.WriteString(r.src[r.pos : r.pos+2])
			}
			r.pos += 2
		default:
			b.WriteByte(c)
			r.pos++
		}
	}
	return "", r.errorf(start, "unterminated regex: expected a closing '\"'")
}
