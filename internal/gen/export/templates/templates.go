package templates

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

// The templates, by the export format that uses each.
const (
	Mermaid  = "topology.mmd.tmpl"
	DOT      = "topology.dot.tmpl"
	Markdown = "topology.md.tmpl"
)

var all = template.Must(template.New("").Funcs(Funcs()).ParseFS(files, "*.tmpl"))

// Execute runs the template name (Mermaid, DOT or Markdown) on d.
func Execute(name string, d *Data) ([]byte, error) {
	t := all.Lookup(name)
	if t == nil {
		return nil, fmt.Errorf("templates: no template %q", name)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("templates: %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// Funcs are the functions the templates call:
//
//	dot       a DOT double-quoted string, each Line a line break
//	mermaid   a Mermaid double-quoted label, each Line a line break
//	md        Markdown inline text: no line break, | and the Markdown
//	          punctuation escaped (safe in a table cell)
//	code      a Markdown code span that no backtick in the text ends
//	join      strings.Join
func Funcs() template.FuncMap {
	return template.FuncMap{
		"dot":     dotString,
		"mermaid": mermaidString,
		"md":      mdText,
		"code":    mdCode,
		"join":    strings.Join,
	}
}

// Line is the separator of the lines of a label: the export stage joins
// lines with it, each template turns it into its own line break. It is
// the ASCII record separator, not a line feed, so that a line feed inside
// a name is shown as \n rather than obeyed.
const Line = "\x1e"

// display shows every character of s that is not printable as an escape
// (a tab as \t, a line break within a name as \n), so that labels stay on
// the lines the export stage gave them.
func display(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func lines(s string) []string {
	out := strings.Split(s, Line)
	for i, l := range out {
		out[i] = display(l)
	}
	return out
}

func dotString(s string) string {
	ls := lines(s)
	for i, l := range ls {
		l = strings.ReplaceAll(l, `\`, `\\`)
		ls[i] = strings.ReplaceAll(l, `"`, `\"`)
	}
	return `"` + strings.Join(ls, `\n`) + `"`
}

var mermaidEscapes = strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "#", "#35;", "`", "#96;")

func mermaidString(s string) string {
	ls := lines(s)
	for i, l := range ls {
		ls[i] = mermaidEscapes.Replace(l)
	}
	return `"` + strings.Join(ls, "<br/>") + `"`
}

var mdEscapes = strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`, "#", `\#`)

func mdText(s string) string {
	return mdEscapes.Replace(strings.Join(lines(s), " "))
}

func mdCode(s string) string {
	s = strings.Join(lines(s), " ")
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		pad = " "
	}
	// A | ends a table cell even inside a code span (GFM).
	return fence + pad + strings.ReplaceAll(s, "|", `\|`) + pad + fence
}
