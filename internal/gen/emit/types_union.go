package emit

import (
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/dave/jennifer/jen"
)

const typAvroPkg = "github.com/hamba/avro/v2"

// typUnion emits a general Avro union: a struct with one pointer per
// branch and the two methods of hamba/avro's UnionConverter. They need no
// registration with hamba/avro, so any avro.Config can encode and decode
// them (see schema.Avro unions).
func typUnion(f *jen.File, t *schema.Type) {
	typStruct(f, t)
	typUnionToAny(f, t)
	typUnionFromAny(f, t)
}

// typUnionToAny emits
//
//	func (u *U) ToAny() (any, error) {
//		if u.Int != nil {
//			return &map[string]any{"int": *u.Int}, nil
//		}
//		return nil, errors.New("U: no branch of the union is set")
//	}
//
// hamba/avro encodes a one-entry map by its key, the branch name.
func typUnionToAny(f *jen.File, t *schema.Type) {
	f.Comment("ToAny returns the branch that is set, keyed by its Avro name, for hamba/avro.")
	f.Func().Params(jen.Id("u").Op("*").Id(t.Name)).Id("ToAny").Params().Params(jen.Any(), jen.Error()).BlockFunc(func(g *jen.Group) {
		for _, fd := range t.Fields {
			g.If(jen.Id("u").Dot(fd.GoName).Op("!=").Nil()).Block(
				jen.Return(jen.Op("&").Map(jen.String()).Any().Values(jen.Dict{
					jen.Lit(fd.Branch): jen.Op("*").Id("u").Dot(fd.GoName),
				}), jen.Nil()),
			)
		}
		g.Return(jen.Nil(), jen.Qual("errors", "New").Call(jen.Lit(t.Name+": no branch of the union is set")))
	})
}

// typUnionFromAny emits
//
//	func (u *U) FromAny(payload any) error {
//		*u = U{}
//		switch v := payload.(type) {
//		case map[string]any: // hamba's generic form: branch name → value
//			if len(v) != 1 { ... }
//			for name, g := range v {
//				switch name {
//				case "int": x, ok := g.(int); ...; y := int32(x); u.Int = &y
//				case "com.acme.Line": var x Line; acemqimpl.ConvertAvroBranch(...); u.Line = &x
//				default: return fmt.Errorf(...)
//				}
//			}
//		case int: // a branch every resolver knows, typed
//			x := int32(v)
//			u.Int = &x
//		default:
//			return fmt.Errorf("U: unexpected union value of type %T", payload)
//		}
//		return nil
//	}
func typUnionFromAny(f *jen.File, t *schema.Type) {
	f.Comment("FromAny sets the branch a decoded value belongs to, for hamba/avro.")
	f.Func().Params(jen.Id("u").Op("*").Id(t.Name)).Id("FromAny").Params(jen.Id("payload").Any()).Error().BlockFunc(func(g *jen.Group) {
		g.Op("*").Id("u").Op("=").Id(t.Name).Values()
		g.Switch(jen.Id("v").Op(":=").Id("payload").Assert(jen.Type())).BlockFunc(func(sw *jen.Group) {
			sw.Case(jen.Map(jen.String()).Any()).Block(typUnionGeneric(t)...)
			for _, fd := range t.Fields {
				if fd.Typed {
					sw.Case(typExpr(fd.Value)).Block(typUnionSet(fd, jen.Id("v"))...)
				}
			}
			sw.Default().Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(t.Name+": unexpected union value of type %T"), jen.Id("payload")))
		})
		g.Return(jen.Nil())
	})
}

// typUnionGeneric converts hamba/avro's generic form of a union.
func typUnionGeneric(t *schema.Type) []jen.Code {
	return []jen.Code{
		jen.If(jen.Len(jen.Id("v")).Op("!=").Lit(1)).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(t.Name+": a union value with %d branches"), jen.Len(jen.Id("v")))),
		),
		jen.For(jen.List(jen.Id("name"), jen.Id("g")).Op(":=").Range().Id("v")).Block(
			jen.Switch(jen.Id("name")).BlockFunc(func(sw *jen.Group) {
				for _, fd := range t.Fields {
					sw.Case(jen.Lit(fd.Branch)).Block(typUnionBranch(t, fd)...)
				}
				sw.Default().Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(t.Name+": unknown union branch %q"), jen.Id("name")))
			}),
		),
	}
}

// typUnionBranch sets field fd from the generic value g.
func typUnionBranch(t *schema.Type, fd *schema.Field) []jen.Code {
	if fd.Value == nil {
		// var x Line
		// if err := acemqimpl.ConvertAvroBranch(acemqAvroSchema0, []int{3, 1}, g, &x); err != nil { ... }
		// u.Line = &x
		path := make([]jen.Code, len(fd.Path))
		for i, p := range fd.Path {
			path[i] = jen.Lit(p)
		}
		return []jen.Code{
			jen.Var().Id("x").Add(typExpr(fd.Type.Elem)),
			jen.If(jen.Err().Op(":=").Add(impl("ConvertAvroBranch")).Call(jen.Id(fd.Source.Ident), jen.Index().Int().Values(path...), jen.Id("g"), jen.Op("&").Id("x")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(t.Name+": branch %s: %w"), jen.Id("name"), jen.Err())),
			),
			jen.Id("u").Dot(fd.GoName).Op("=").Op("&").Id("x"),
		}
	}
	// x, ok := g.(int)
	// if !ok { return fmt.Errorf(...) }
	return append([]jen.Code{
		jen.List(jen.Id("x"), jen.Id("ok")).Op(":=").Id("g").Assert(typExpr(fd.Value)),
		jen.If(jen.Op("!").Id("ok")).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(t.Name+": branch %s holds %T"), jen.Id("name"), jen.Id("g"))),
		),
	}, typUnionSet(fd, jen.Id("x"))...)
}

// typUnionSet sets field fd from v, of type fd.Value, converting when the
// field's type differs.
func typUnionSet(fd *schema.Field, v *jen.Statement) []jen.Code {
	if fd.Value.String() == fd.Type.Elem.String() {
		return []jen.Code{jen.Id("u").Dot(fd.GoName).Op("=").Op("&").Add(v)}
	}
	return []jen.Code{
		jen.Id("y").Op(":=").Add(typExpr(fd.Type.Elem)).Call(v),
		jen.Id("u").Dot(fd.GoName).Op("=").Op("&").Id("y"),
	}
}

// typAvroSources emits, when a union needs to re-encode a branch, the
// schema texts it is re-encoded with (the conversion itself is the
// acemqimpl.ConvertAvroBranch, one copy for every package):
//
//	const acemqAvroSchema0Text = `{...}`
//	var acemqAvroSchema0 = sync.OnceValues(func() (avro.Schema, error) { ... })
func typAvroSources(f *jen.File, u *schema.Universe) {
	if len(u.AvroSources) == 0 {
		return
	}
	for _, src := range u.AvroSources {
		f.Comment(src.TextIdent + " is the Avro schema some union branches are re-encoded with.")
		textConst(f, src.TextIdent, src.Text)
		f.Comment(src.Ident + " parses it once, on first use.")
		f.Var().Id(src.Ident).Op("=").Qual("sync", "OnceValues").Call(
			jen.Func().Params().Params(jen.Qual(typAvroPkg, "Schema"), jen.Error()).Block(
				jen.Return(jen.Qual(typAvroPkg, "ParseWithCache").Call(jen.Id(src.TextIdent), jen.Lit(""), jen.Op("&").Qual(typAvroPkg, "SchemaCache").Values())),
			),
		)
	}
}
