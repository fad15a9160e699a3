package emit

import (
	"github.com/acemq/acemq-go/generator/schema"
	"github.com/dave/jennifer/jen"
)

const typAvroPkg = "github.com/hamba/avro/v2"

// typUnion emits a general Avro union: a struct with one pointer per
// branch and the two methods of hamba/avro's UnionConverter.
func typUnion(f *jen.File, t *schema.Type) {
	typStruct(f, t)
	typUnionToAny(f, t)
	typUnionFromAny(f, t)
}

// typUnionToAny emits
//
//	func (u *U) ToAny() (any, error) {
//		if u.Int != nil {
//			return u.Int, nil
//		}
//		return nil, errors.New("U: no branch is set")
//	}
func typUnionToAny(f *jen.File, t *schema.Type) {
	f.Comment("ToAny returns the branch that is set, for hamba/avro.")
	f.Func().Params(jen.Id("u").Op("*").Id(t.Name)).Id("ToAny").Params().Params(jen.Any(), jen.Error()).BlockFunc(func(g *jen.Group) {
		for _, fd := range t.Fields {
			g.If(jen.Id("u").Dot(fd.GoName).Op("!=").Nil()).Block(
				jen.Return(jen.Id("u").Dot(fd.GoName), jen.Nil()),
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
//		case int:
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
			for _, fd := range t.Fields {
				if fd.Value.String() == fd.Type.Elem.String() {
					sw.Case(typExpr(fd.Value)).Block(
						jen.Id("u").Dot(fd.GoName).Op("=").Op("&").Id("v"),
					)
					continue
				}
				sw.Case(typExpr(fd.Value)).Block(
					jen.Id("x").Op(":=").Add(typExpr(fd.Type.Elem)).Call(jen.Id("v")),
					jen.Id("u").Dot(fd.GoName).Op("=").Op("&").Id("x"),
				)
			}
			sw.Default().Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(t.Name+": unexpected union value of type %T"), jen.Id("payload")))
		})
		g.Return(jen.Nil())
	})
}

// typRegistrations emits one init function that tells hamba/avro which Go
// type each union branch name decodes to:
//
//	func init() {
//		avro.Register("com.acme.Rec", *new(Rec))
//	}
func typRegistrations(f *jen.File, u *schema.Universe) {
	seen := map[string]bool{}
	var regs []schema.Registration
	for _, t := range u.Types {
		for _, r := range t.Register {
			if !seen[r.Name] {
				seen[r.Name] = true
				regs = append(regs, r)
			}
		}
	}
	if len(regs) == 0 {
		return
	}
	f.Comment("The named branches of the unions above, for hamba/avro's default configuration.")
	f.Func().Id("init").Params().BlockFunc(func(g *jen.Group) {
		for _, r := range regs {
			g.Qual(typAvroPkg, "Register").Call(jen.Lit(r.Name), jen.Op("*").New(typExpr(r.Type)))
		}
	})
}
