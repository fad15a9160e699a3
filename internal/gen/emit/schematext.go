package emit

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"
)

// MaxLine is the widest line, in columns (runes, a tab counting one), the
// emitters write for the code of a package a manifest can give: a longer
// one a reviewer scrolls for. Schema text keeps its own line breaks; a
// line of it too long for MaxLine continues on the next line of the
// constant (see textConst).
const MaxLine = 120

// textConst emits a schema's text as a string constant at the top level,
// as hamba/avro's gen writes one: a raw string, so that the schema reads
// as its file does and a diff of the generated code shows the lines of it
// that changed,
//
//	const orderPlacedSchema = `{
//	  "type": "record",
//	  ...
//	}`
//
// A text a raw string cannot hold as it is (a backquote, a carriage return,
// which a raw string drops, or a byte Go source may not contain) is
// quoted instead (and so is one with a line starting with //, which go
// generate would read as a directive), a string of one line per line of text joined by +. Either
// way, a line that would pass MaxLine is cut into pieces joined by +, so
// the constant's value is text, byte for byte.
func textConst(f *jen.File, name, text string) {
	prefix := "const " + name + " = "
	if rawable(text) {
		f.Const().Id(name).Op("=").Add(rawText(prefix, text))
		return
	}
	f.Const().Id(name).Op("=").Add(quotedText(prefix, text))
}

// rawable says whether a raw string literal holds text as it is.
func rawable(text string) bool {
	if !utf8.ValidString(text) {
		return false
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "//") {
			return false // go generate would read a //go:generate line
		}
	}
	for _, r := range text {
		switch {
		case r == '`', r == '\r', r == 0, r == '\uFEFF':
			return false
		case r < ' ' && r != '\n' && r != '\t', r == 0x7f:
			return false
		}
	}
	return true
}

// rawText is text as raw string pieces joined by +, each line of the
// result within MaxLine. A piece after the first starts a continuation
// line (gofmt indents it one tab), so its first line is two columns in;
// the first piece starts after prefix.
func rawText(prefix, text string) *jen.Statement {
	var pieces []string
	var piece strings.Builder
	col := width(prefix) + 1 // the opening backquote
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			piece.WriteByte('\n')
			col = 0
		}
		// Room for what may follow on the line: "` +" to continue, or
		// the closing backquote.
		for col+width(line)+3 > MaxLine {
			head := cut(line, MaxLine-3-col) // "" when a long name leaves no room
			piece.WriteString(head)
			pieces = append(pieces, piece.String())
			piece.Reset()
			line = line[len(head):]
			col = 2 // "\t`"
		}
		piece.WriteString(line)
		col += width(line)
	}
	pieces = append(pieces, piece.String())
	s := jen.Op("`" + pieces[0] + "`")
	for _, p := range pieces[1:] {
		s = s.Op("+").Line().Op("`" + p + "`")
	}
	return s
}

// quotedText is text as a string of one quoted line per line of text, a
// line too long for MaxLine in several:
//
//	"" +
//		"{\n" +
//		"  \"type\": \"record\",\n" +
//		"}"
func quotedText(prefix, text string) *jen.Statement {
	ls := strings.SplitAfter(text, "\n")
	if len(ls) == 1 && width(prefix)+width(strconv.Quote(text)) <= MaxLine {
		return jen.Lit(text)
	}
	s := jen.Lit("")
	for _, l := range ls {
		for l != "" {
			// A quoted piece starts a tab in and may end with " +".
			head := l
			for width(strconv.Quote(head))+3 > MaxLine && len(head) > 1 {
				head = cut(head, width(head)*3/4)
			}
			s = s.Op("+").Line().Lit(head)
			l = l[len(head):]
		}
	}
	return s
}

// cut is the longest head of s within n columns, ending after a space
// when one is in the second half of it, so that a long line breaks
// between words; a head ending in the middle of a word is any other
// prefix (never inside a rune).
func cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	end, cols := 0, 0
	for i, r := range s {
		if cols == n {
			break
		}
		cols++
		end = i + utf8.RuneLen(r)
	}
	head := s[:end]
	if end == len(s) {
		return head
	}
	if sp := strings.LastIndexByte(head, ' '); sp >= len(head)/2 {
		return head[:sp+1]
	}
	return head
}

// width is the columns s takes: its runes, a tab counting one.
func width(s string) int { return utf8.RuneCountInString(s) }
