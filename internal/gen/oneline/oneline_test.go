package oneline_test

import (
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/oneline"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"plain text, \"quoted\" and a \\ backslash", "plain text, \"quoted\" and a \\ backslash"},
		{"a\nb", `a\nb`},
		{"tab\there\r", `tab\there\r`},
		{"nul\x00 del\x7f", `nul\x00 del\x7f`},
		{"next line\u0085", `next line\u0085`},
		{"é, 日本, \u00a0nbsp", "é, 日本, \u00a0nbsp"}, // not control characters: as is
		{"line\u2028sep", "line\u2028sep"},         // a format character, not a control one
	} {
		if got := oneline.Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"schemas/order.json", "schemas/order.json"},
		{"#/$defs/a b", "#/$defs/a b"},
		{`a"b\c`, `a"b\c`}, // printable: as is
		{"é日本", "é日本"},
		{"a\nb", `"a\nb"`},
		{"nbsp\u00a0", `"nbsp\u00a0"`},
		{"line\u2028sep", `"line\u2028sep"`},
		{"q\"\n", `"q\"\n"`},
	} {
		if got := oneline.Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// What either returns is one line: no character Go or a terminal breaks a
// line at survives. (Escape leaves U+2028 and U+2029, the Unicode line and
// paragraph separators, as is: they are not control characters, and
// neither Go nor a terminal breaks a line at them; Quote quotes them.)
func TestOneLine(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		all.WriteRune(r)
	}
	for name, f := range map[string]func(string) string{"Escape": oneline.Escape, "Quote": oneline.Quote} {
		if got := f(all.String()); strings.ContainsAny(got, "\n\r\v\f\u0085") {
			t.Errorf("%s leaves a line break", name)
		}
	}
}
