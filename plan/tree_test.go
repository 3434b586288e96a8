package plan

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// naivePos is what source.pos must return: the line, and the runes from
// the line's start, counted as utf8.RuneCount does.
func naivePos(data []byte, off int) Position {
	off = min(max(off, 0), len(data))
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return Position{Line: bytes.Count(data[:off], []byte{'\n'}) + 1, Column: utf8.RuneCount(data[start:off]) + 1}
}

func TestSourcePos(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := [][]byte{[]byte("a"), []byte("é"), []byte("日本"), []byte("\U0001F600"), {0x80}, {0xe2, 0x82}, {0xff}, []byte("\n")}
	for _, tc := range []struct {
		name    string
		size    int
		newline bool
	}{
		{"empty", 0, false},
		{"short lines", 3 * markStride, true},
		{"one long line", 5*markStride + 7, false},
		{"long lines", 9 * markStride, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			for len(data) < tc.size {
				p := pieces[rng.IntN(len(pieces))]
				if p[0] == '\n' && (!tc.newline || rng.IntN(200) > 0) {
					continue
				}
				data = append(data, p...)
			}
			s := &source{data: data}
			offs := []int{-1, 0, len(data), len(data) + 5}
			for range 500 {
				offs = append(offs, rng.IntN(len(data)+1))
			}
			for _, off := range offs {
				assert.Equal(t, naivePos(data, off), s.pos(off), "offset %d", off)
			}
		})
	}
}
