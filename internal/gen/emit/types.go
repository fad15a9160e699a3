package emit

import (
	"strings"

	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/dave/jennifer/jen"
)

// Types adds every type of u to f, in u.Types order: structs, enums (a
// string type and its constants), aliases and Avro union structs (with
// the ToAny/FromAny methods hamba/avro calls), then, when a union needs
// them, the Avro schema texts and the helper that converts union branches.
func Types(f *jen.File, u *schema.Universe) {
	f.ImportName(typAvroPkg, "avro")
	for _, t := range u.Types {
		switch t.Kind {
		case schema.Struct:
			typStruct(f, t)
		case schema.Enum:
			typEnum(f, t)
		case schema.Alias:
			typAlias(f, t)
		case schema.Union:
			typUnion(f, t)
		}
	}
	typAvroSources(f, u)
}

// typDoc adds one // comment per doc line. Each line goes through
// schema.DocLines again: jennifer writes a comment holding a newline as a
// /* */ block, so a line must never reach it with one, whatever built it.
func typDoc(g *jen.Group, lines []string) {
	for _, l := range docLines(lines) {
		g.Comment(l)
	}
}

// typFileDoc adds doc lines at file level, as typDoc does.
func typFileDoc(f *jen.File, lines []string) {
	for _, l := range docLines(lines) {
		f.Comment(l)
	}
}

// docLines is every line of lines made safe by schema.DocLines, split
// where a line held a line break; blank lines between paragraphs stay.
func docLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			out = append(out, "")
			continue
		}
		out = append(out, schema.DocLines(l)...)
	}
	return out
}

// typStruct emits
//
//	// Doc
//	type Name struct {
//		// Field doc
//		Field T `avro:"field" json:"field"`
//	}
func typStruct(f *jen.File, t *schema.Type) {
	typFileDoc(f, t.Doc)
	f.Type().Id(t.Name).StructFunc(func(g *jen.Group) {
		typFields(g, t.Fields)
	})
}

func typFields(g *jen.Group, fields []*schema.Field) {
	for _, fd := range fields {
		typDoc(g, fd.Doc)
		g.Id(fd.GoName).Add(typExpr(fd.Type)).Tag(typTags(fd))
	}
}

func typTags(fd *schema.Field) map[string]string {
	tags := map[string]string{}
	if fd.Tags.Avro {
		tags["avro"] = fd.WireName
	}
	if fd.Tags.JSON {
		j := fd.WireName
		if j == "-" {
			j = "-," // a property named "-", not a skipped field
		}
		if fd.Tags.OmitEmpty {
			j = strings.TrimSuffix(j, ",") + ",omitempty"
		}
		tags["json"] = j
	}
	return tags
}

// typEnum emits
//
//	type Suit string
//
//	const (
//		SuitSpades Suit = "SPADES"
//	)
func typEnum(f *jen.File, t *schema.Type) {
	typFileDoc(f, t.Doc)
	f.Type().Id(t.Name).String()
	if len(t.Values) == 0 {
		return
	}
	f.Comment("Values of " + t.Name + ".")
	f.Const().DefsFunc(func(g *jen.Group) {
		for _, v := range t.Values {
			typDoc(g, v.Doc)
			g.Id(v.GoName).Id(t.Name).Op("=").Lit(v.Value)
		}
	})
}

// typAlias emits `type Name T`, or `type Name = T` for a Go alias.
func typAlias(f *jen.File, t *schema.Type) {
	typFileDoc(f, t.Doc)
	if t.GoAlias {
		f.Type().Id(t.Name).Op("=").Add(typExpr(t.Target))
		return
	}
	f.Type().Id(t.Name).Add(typExpr(t.Target))
}

// typExpr renders a type expression.
func typExpr(r *schema.TypeRef) jen.Code {
	switch r.Kind {
	case schema.Builtin:
		if r.Name == "struct{}" {
			return jen.Struct()
		}
		return jen.Id(r.Name)
	case schema.Qual:
		return jen.Qual(r.Pkg, r.Name)
	case schema.Named:
		return jen.Id(r.Named.Name)
	case schema.Pointer:
		return jen.Op("*").Add(typExpr(r.Elem))
	case schema.Slice:
		return jen.Index().Add(typExpr(r.Elem))
	case schema.Map:
		return jen.Map(jen.String()).Add(typExpr(r.Elem))
	case schema.Array:
		return jen.Index(jen.Lit(r.Len)).Add(typExpr(r.Elem))
	}
	panic("emit: unknown type expression kind")
}
