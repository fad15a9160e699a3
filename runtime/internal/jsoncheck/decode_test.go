package jsoncheck

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// plainTextByBytes is plainText byte by byte: no backslash, no control
// character, UTF-8.
func plainTextByBytes(s []byte) bool {
	for _, c := range s {
		if c == '\\' || c < ' ' {
			return false
		}
	}
	return utf8.Valid(s)
}

// TestPlainTextIsTheByteScan: the eight-at-a-time test of a string's
// bytes is the byte-by-byte one, for each special byte at each place of a
// word and beside it.
func TestPlainTextIsTheByteScan(t *testing.T) {
	specials := []string{"\\", "\x00", "\x1f", " ", "\x7f", "\x80", "\xff", "é", "\xed\xa0\x80", "\ufffd", "[", "]", "]\\", "\x20\x1f"}
	for n := range 20 {
		for at := 0; at <= n; at++ {
			for _, sp := range specials {
				s := []byte(strings.Repeat("a", at) + sp + strings.Repeat("b", n-at))
				if got, want := plainText(s), plainTextByBytes(s); got != want {
					t.Errorf("plainText(%q) = %v, want %v", s, got, want)
				}
			}
		}
	}
}

// FuzzPlainText: plainText is plainTextByBytes on any bytes.
func FuzzPlainText(f *testing.F) {
	f.Add([]byte("line item aaaaaaaa\\bbbbbbbb"))
	f.Add([]byte("0123456\x1f89abcdef"))
	f.Add([]byte("01234567é9abcdef"))
	f.Fuzz(func(t *testing.T, s []byte) {
		if got, want := plainText(s), plainTextByBytes(s); got != want {
			t.Errorf("plainText(%q) = %v, want %v", s, got, want)
		}
	})
}

// A SliceBuf's Slice is the elements Next gave, in order, each written
// through its pointer: none (an empty slice, not nil), those on the
// stack, and those past them on the heap.
func TestSliceBufIsAppend(t *testing.T) {
	for n := range 20 {
		var b SliceBuf[[2]int]
		var want [][2]int
		for i := range n {
			p := b.Next()
			if *p != [2]int{} {
				t.Fatalf("n=%d: element %d is %v before it is written, want zero", n, i, *p)
			}
			*p = [2]int{i, -i}
			want = append(want, [2]int{i, -i})
		}
		got := b.Slice()
		if got == nil || len(got) != n || (n > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("n=%d: Slice is %v (nil %v), want %v", n, got, got == nil, want)
		}
	}
}
