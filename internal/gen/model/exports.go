package model

import (
	"path"
	"strings"
)

// Export is an entry of the manifest's exports:, a topology artifact that
// acemq-gen writes with the code (and acemq-gen check keeps current).
type Export struct {
	Format string // definitions, asyncapi, mermaid, dot or markdown
	Path   string // relative to the manifest's directory, forward slashes, cleaned
	Vhost  string // definitions, asyncapi: the vhost the file names ("" is /)
}

func (b *builder) exports() {
	seen := map[string]bool{}
	for _, me := range b.file.Exports {
		who := "exports: " + me.Format.Value
		x := &Export{Format: me.Format.Value}
		p := me.Path.Value
		clean := path.Clean(p)
		switch {
		case p == "":
			continue // the schema has reported it
		case strings.Contains(p, `\`):
			b.errorf(me.Path.Pos, "%s: path %q: write forward slashes (the manifest is read the same on every system)", who, p)
		case path.IsAbs(p):
			b.errorf(me.Path.Pos, "%s: path %q is absolute; write it relative to the manifest's directory", who, p)
		case strings.HasSuffix(clean, ".go"):
			b.errorf(me.Path.Pos, "%s: path %q ends in .go; an artifact is not Go code (name it %s)", who, p, strings.TrimSuffix(clean, ".go")+ExportExtension(x.Format))
		case seen[clean]:
			b.errorf(me.Path.Pos, "%s: path %q is written by another entry of exports:; give each its own file", who, p)
		}
		seen[clean] = true
		x.Path = clean
		if me.Vhost != nil {
			if x.Format != "definitions" && x.Format != "asyncapi" {
				b.errorf(me.Vhost.Pos, "%s: vhost applies to formats definitions and asyncapi only (the vhost they name); remove it", who)
			}
			x.Vhost = me.Vhost.Value
		}
		b.m.Exports = append(b.m.Exports, x)
	}
}

// ExportExtension is the usual file extension of an export format.
func ExportExtension(format string) string {
	switch format {
	case "mermaid":
		return ".mmd"
	case "dot":
		return ".dot"
	case "markdown":
		return ".md"
	}
	return ".json"
}
