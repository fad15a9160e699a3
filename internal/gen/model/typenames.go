package model

import (
	"fmt"

	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/internal/gen/names"
	"github.com/acemq/acemq-go/internal/gen/schema"
)

// typeGoNames checks the type_go_names entries and returns them by key
// (schema.TypeKey), for schema.WithTypeNames.
func (b *builder) typeGoNames() map[string]string {
	out := map[string]string{}
	at := map[string]manifest.Str{}
	for _, e := range b.file.TypeGoNames {
		if why := names.CheckGoName(e.GoName.Value); why != "" {
			b.errorf(e.GoName.Pos, "type_go_names %q: %s", e.Key.Value, why)
			continue
		}
		key := schema.TypeKey(e.Key.Value)
		if prev, dup := at[key]; dup {
			b.errorf(e.Key.Pos, "type_go_names %q names the type of %q (%s:%d:%d) again; keep one of them",
				e.Key.Value, prev.Value, b.file.Path, prev.Pos.Line, prev.Pos.Col)
			continue
		}
		at[key] = e.Key
		out[key] = e.GoName.Value
	}
	return out
}

// unusedTypeGoNames reports each type_go_names entry that named no type.
func (b *builder) unusedTypeGoNames(unused []string) {
	for _, key := range unused {
		for _, e := range b.file.TypeGoNames {
			if schema.TypeKey(e.Key.Value) == key {
				b.errorf(e.Key.Pos, "type_go_names %q: no message's schema has a type there (a key is <schema path>#<JSON pointer>, like common/address.json# or schemas/refund.json#/$defs/line, "+
					"or an Avro full name, like com.acme.Method; a message's own type is named by its go_name)", e.Key.Value)
			}
		}
	}
}

// nameClash reports two declarations that both become one Go name, at the
// manifest entry of the one to rename (B), naming both and where the
// other is.
func (b *builder) nameClash(c *schema.NameClash) {
	pos := b.messageKeyPos(c.B.Message)
	other := c.A.What
	switch {
	case c.A.Message == "":
		if prev, ok := b.ns.taken[c.Name]; ok {
			other = prev.who
			if prev.pos.Line > 0 {
				other += fmt.Sprintf(" (%s:%d:%d)", b.file.Path, prev.pos.Line, prev.pos.Col)
			}
		}
	case c.A.Message != c.B.Message || c.A.Root:
		p := b.messageKeyPos(c.A.Message)
		if c.A.Root {
			other += fmt.Sprintf(" (%s:%d:%d)", b.file.Path, p.Line, p.Col)
		} else {
			other += fmt.Sprintf(" (from message %q, %s:%d:%d)", c.A.Message, b.file.Path, p.Line, p.Col)
		}
	}
	if c.B.Renamed != "" {
		for _, e := range b.file.TypeGoNames {
			if schema.TypeKey(e.Key.Value) == c.B.Renamed {
				b.errorf(e.GoName.Pos, "type_go_names %q: %s becomes the Go name %s, which %s has too; choose another", e.Key.Value, c.B.What, c.Name, other)
				return
			}
		}
	}
	var fix string
	switch {
	case c.Suggest != "" && c.A.Root:
		fix = fmt.Sprintf("; name one of them otherwise: type_go_names: {%s}, or a go_name for %s", c.Suggest, c.A.What)
	case c.Suggest != "":
		fix = fmt.Sprintf("; name it otherwise in type_go_names, e.g. type_go_names: {%s}", c.Suggest)
	default:
		fix = fmt.Sprintf("; give message %q another go_name", c.B.Message)
	}
	b.errorf(pos, "message %q: %s becomes the Go name %s, which %s has too%s", c.B.Message, c.B.What, c.Name, other, fix)
}

// messageKeyPos is where the message named name is declared.
func (b *builder) messageKeyPos(name string) manifest.Pos {
	for _, mm := range b.file.Messages {
		if mm.Name.Value == name {
			return mm.Name.Pos
		}
	}
	if o := b.offered[name]; o != nil {
		return o.site.pos // an imported message: where this manifest takes it
	}
	return manifest.Pos{}
}
