package emit

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/dave/jennifer/jen"
)

// The generated JSON decoders (issue 23): each struct a checked JSON
// message's payload reaches, when the decoder reads every one of its
// fields' kinds, gets
//
//	func (v *Order) acemqDecodeJSON(d *acemqimpl.JSONDecoder, sh *acemqimpl.JSONShape) bool
//
// which reads the object at d into the zero value *v exactly as
// json.Unmarshal would, checking on the way what the decode shape sh
// says (required members, closed objects, formats and bounds on the
// text), and each such message a
//
//	func acemqDecodeOrder(d *acemqimpl.JSONDecoder, v any) bool
//
// that its message type is given as acemqimpl.JSONFuncs.Decode. Whatever
// it does not read exactly (an escape, a key in another case, an unknown
// or repeated key, null, a number its Go type would read otherwise) makes
// it return false, and the codec decodes the body as it does without it.
// Structs with a field of another kind (a map, a union, raw JSON, any)
// get no decoder, nor do the structs that reach them.

const decName = "acemqDecodeJSON"

// jsonDecoders is which structs get a decoder method, and the member
// name each field is read under ("" for a field encoding/json skips).
type jsonDecoders struct {
	order []*schema.Type
	names map[*schema.Type][]string
}

// newJSONDecoders finds the structs the checked JSON messages' payloads
// reach that a decoder reads: every field of a kind it reads, every
// struct it reaches one too.
func newJSONDecoders(m *model.Model) *jsonDecoders {
	d := &jsonDecoders{names: map[*schema.Type][]string{}}
	if m.Types == nil {
		return d
	}
	reach := map[*schema.Type]bool{}
	var walk func(r *schema.TypeRef)
	walk = func(r *schema.TypeRef) {
		switch {
		case r.Kind == schema.Named && !reach[r.Named]:
			reach[r.Named] = true
			for _, fd := range r.Named.Fields {
				walk(fd.Type)
			}
			if r.Named.Target != nil {
				walk(r.Named.Target)
			}
		case r.Elem != nil:
			walk(r.Elem)
		}
	}
	for _, msg := range m.Messages {
		if jsonChecked(msg) && msg.JSONDecodeFunc != "" {
			walk(&schema.TypeRef{Kind: schema.Named, Named: msg.Root})
		}
	}
	// A struct is decodable when its fields are; assume every reached
	// struct is, and drop the ones that are not until nothing changes.
	for _, t := range m.Types.Types {
		if t.Kind != schema.Struct || !reach[t] || len(t.Fields) > 64 {
			continue
		}
		if names, ok := decodeNames(t); ok {
			d.names[t] = names
		}
	}
	for changed := true; changed; {
		changed = false
		for t := range d.names {
			for _, fd := range t.Fields {
				if !d.reads(fd.Type, 0) {
					delete(d.names, t)
					changed = true
					break
				}
			}
		}
	}
	// Only the structs a decodable payload reaches get their method.
	used := map[*schema.Type]bool{}
	var use func(r *schema.TypeRef)
	use = func(r *schema.TypeRef) {
		switch {
		case r.Kind == schema.Named && !used[r.Named]:
			used[r.Named] = true
			for _, fd := range r.Named.Fields {
				use(fd.Type)
			}
			if r.Named.Target != nil {
				use(r.Named.Target)
			}
		case r.Elem != nil:
			use(r.Elem)
		}
	}
	for _, msg := range m.Messages {
		if d.decodes(msg) {
			use(&schema.TypeRef{Kind: schema.Named, Named: msg.Root})
		}
	}
	for _, t := range m.Types.Types {
		if _, ok := d.names[t]; ok && used[t] {
			d.order = append(d.order, t)
		}
	}
	for t := range d.names {
		if !used[t] {
			delete(d.names, t)
		}
	}
	return d
}

// decodeNames is the name each field of t is decoded under, taken from
// the key encoding/json writes it with (structKeys); false when a key
// would need an escape (a body's key with one is not read anyway) or
// structKeys refuses t.
func decodeNames(t *schema.Type) ([]string, bool) {
	keys, ok := structKeys(t)
	if !ok {
		return nil, false
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		if k == "" {
			continue
		}
		q := strings.TrimSuffix(k, ":")
		if strings.Contains(q, `\`) || json.Unmarshal([]byte(q), &names[i]) != nil || names[i] == "" {
			return nil, false
		}
	}
	return names, true
}

// reads says the decoder reads a value of Go type r.
func (d *jsonDecoders) reads(r *schema.TypeRef, depth int) bool {
	if depth > 8 {
		return false
	}
	switch r.Kind {
	case schema.Builtin:
		return decodeScalar(r.Name) != ""
	case schema.Qual:
		return r.Pkg == timePkg && r.Name == "Time"
	case schema.Named:
		t := r.Named
		switch t.Kind {
		case schema.Struct:
			_, ok := d.names[t]
			return ok
		case schema.Enum:
			return true
		case schema.Alias:
			if !t.GoAlias && t.Target.Kind != schema.Builtin && t.Target.Kind != schema.Slice {
				return false
			}
			return d.reads(t.Target, depth+1)
		}
	case schema.Pointer:
		return r.Elem.Kind != schema.Pointer && d.reads(r.Elem, depth+1)
	case schema.Slice:
		return !(r.Elem.Kind == schema.Builtin && r.Elem.Name == "byte") && d.reads(r.Elem, depth+1)
	}
	return false
}

// decodeScalar is the acemqimpl function reading the predeclared type
// name ("" for none).
func decodeScalar(name string) string {
	switch name {
	case "string":
		return "DecodeJSONString"
	case "bool":
		return "DecodeJSONBool"
	case "int", "int8", "int16", "int32", "int64":
		return "DecodeJSONInt"
	case "float32", "float64":
		return "DecodeJSONFloat"
	}
	return ""
}

// decodes says msg's message type gets the generated decoder.
func (d *jsonDecoders) decodes(msg *model.Message) bool {
	_, ok := d.names[msg.Root]
	return ok && jsonChecked(msg) && msg.JSONDecodeFunc != ""
}

// failed is `if !cond { return false }`.
func failed(cond jen.Code) jen.Code {
	return jen.If(jen.Op("!").Add(cond)).Block(jen.Return(jen.False()))
}

// read is the statements reading the value at d, under the shape sh, into
// x (an lvalue of Go type r) whose address is p.
func (d *jsonDecoders) read(x, p *jen.Statement, r *schema.TypeRef, sh jen.Code, depth int) []jen.Code {
	dv := jen.Id("d")
	switch r.Kind {
	case schema.Builtin:
		return []jen.Code{failed(impl(decodeScalar(r.Name)).Call(dv, p, sh))}
	case schema.Qual: // time.Time
		return []jen.Code{failed(dv.Clone().Dot("Time").Call(p, sh))}
	case schema.Named:
		t := r.Named
		switch t.Kind {
		case schema.Struct:
			return []jen.Code{failed(x.Clone().Dot(decName).Call(dv, sh))}
		case schema.Enum:
			return []jen.Code{failed(impl("DecodeJSONString").Call(dv, p, sh))}
		default: // an alias
			target := t.Target
			if !t.GoAlias && target.Kind == schema.Builtin {
				return []jen.Code{failed(impl(decodeScalar(target.Name)).Call(dv, p, sh))}
			}
			if !t.GoAlias {
				return d.readSlice(x, p, r, target.Elem, sh, depth)
			}
			return d.read(x, p, target, sh, depth)
		}
	case schema.Pointer:
		n := jen.Id(fmt.Sprintf("p%d", depth))
		stmts := []jen.Code{n.Clone().Op(":=").New(typExpr(r.Elem))}
		in := jen.Parens(jen.Op("*").Add(n.Clone()))
		if r.Elem.Kind == schema.Named && r.Elem.Named.Kind == schema.Struct {
			in = n.Clone() // the method takes the pointer
		}
		stmts = append(stmts, d.read(in, n.Clone(), r.Elem, sh, depth+1)...)
		return append(stmts, x.Clone().Op("=").Add(n.Clone()))
	case schema.Slice:
		return d.readSlice(x, p, r, r.Elem, sh, depth)
	}
	panic("emit: a decoder for a type it does not read")
}

// readSlice reads an array into x, a slice (of type r) of elem: each
// element a zero value read in place, in a JSONSliceBuf (the first four
// on the stack, one allocation for up to eight); [] is an empty slice,
// not nil, as encoding/json makes it.
func (d *jsonDecoders) readSlice(x, _ *jen.Statement, r, elem *schema.TypeRef, sh jen.Code, depth int) []jen.Code {
	a := jen.Id(fmt.Sprintf("a%d", depth))
	e := jen.Id(fmt.Sprintf("e%d", depth))
	buf := jen.Id(fmt.Sprintf("b%d", depth))
	p := jen.Id(fmt.Sprintf("q%d", depth))
	in := jen.Parens(jen.Op("*").Add(p.Clone()))
	if elem.Kind == schema.Named && elem.Named.Kind == schema.Struct {
		in = p.Clone() // the method takes the pointer
	}
	body := []jen.Code{p.Clone().Op(":=").Add(buf.Clone()).Dot("Next").Call()}
	body = append(body, d.read(in, p.Clone(), elem, e, depth+1)...)
	return []jen.Code{
		jen.Var().Add(a.Clone()).Add(impl("JSONArrayState")),
		jen.List(e.Clone(), jen.Id("ok")).Op(":=").Id("d").Dot("BeginArray").Call(sh, jen.Op("&").Add(a.Clone())),
		failed(jen.Id("ok")),
		jen.Var().Add(buf.Clone()).Add(impl("JSONSliceBuf")).Types(typExpr(elem)),
		jen.For(jen.Id("d").Dot("NextElem").Call(jen.Op("&").Add(a.Clone()))).Block(body...),
		failed(jen.Id("d").Dot("EndArray").Call(jen.Op("&").Add(a.Clone()))),
		x.Clone().Op("=").Add(buf.Clone()).Dot("Slice").Call(),
	}
}

// typDecoder emits the decoder method of struct t.
func (d *jsonDecoders) typDecoder(f *jen.File, t *schema.Type) {
	var cases []jen.Code
	for i, fd := range t.Fields {
		name := d.names[t][i]
		if name == "" {
			continue
		}
		x := jen.Id("v").Dot(fd.GoName)
		body := []jen.Code{
			jen.List(jen.Id("m"), jen.Id("ok")).Op(":=").Id("d").Dot("Field").Call(jen.Op("&").Id("o"), jen.Lit(i)),
			failed(jen.Id("ok")),
		}
		body = append(body, d.read(x, jen.Op("&").Add(x.Clone()), fd.Type, jen.Id("m"), 1)...)
		cases = append(cases, jen.Case(jen.Lit(name)).Block(body...))
	}
	cases = append(cases, jen.Default().Block(jen.Return(jen.False())))
	doc(f.Comment, "%s reads v, a zero value, from d as json.Unmarshal would and checks what the decode shape sh says; false for anything it does not read exactly (the codec then decodes as without it).", decName)
	f.Func().Params(jen.Id("v").Op("*").Id(t.Name)).Id(decName).Params(
		jen.Id("d").Op("*").Add(impl("JSONDecoder")), jen.Id("sh").Op("*").Add(impl("JSONShape")),
	).Bool().Block(
		jen.Var().Id("o").Add(impl("JSONObjectState")),
		failed(jen.Id("d").Dot("BeginObject").Call(jen.Id("sh"), jen.Op("&").Id("o"))),
		jen.For(jen.Id("d").Dot("NextMember").Call(jen.Op("&").Id("o"))).Block(
			jen.Switch(jen.String().Call(jen.Id("o").Dot("Key").Call())).Block(cases...),
		),
		jen.Return(jen.Id("d").Dot("EndObject").Call(jen.Op("&").Id("o"))),
	)
}

// decodeRoot emits the func a message type is given as
// acemqimpl.JSONFuncs.Decode:
//
//	func acemqDecodeOrder(d *acemqimpl.JSONDecoder, v any) bool
func decodeRoot(f *jen.File, t *schema.Type, fn string) {
	doc(f.Comment, "%s is the generated decoder of %s (acemqimpl.JSONDecodeFunc): true when *v is json.Unmarshal's value of the body and the decode shape finds nothing; else false, *v zeroed.", fn, t.Name)
	zero := jen.Op("*").Id("x").Op("=").Id(t.Name).Values()
	f.Func().Id(fn).Params(jen.Id("d").Op("*").Add(impl("JSONDecoder")), jen.Id("v").Any()).Bool().Block(
		jen.List(jen.Id("x"), jen.Id("ok")).Op(":=").Id("v").Assert(jen.Op("*").Id(t.Name)),
		jen.If(jen.Op("!").Id("ok").Op("||").Id("x").Op("==").Nil()).Block(jen.Return(jen.False())),
		zero,
		jen.If(jen.Id("x").Dot(decName).Call(jen.Id("d"), jen.Id("d").Dot("Shape").Call()).Op("&&").Id("d").Dot("End").Call()).Block(
			jen.Return(jen.True())),
		zero.Clone(),
		jen.Return(jen.False()),
	)
}

// decodersCode adds the decoders of m to f: the methods, then one func
// per message type.
func decodersCode(f *jen.File, m *model.Model) {
	d := newJSONDecoders(m)
	for _, t := range d.order {
		d.typDecoder(f, t)
		f.Line()
	}
	done := map[*schema.Type]bool{}
	for _, msg := range m.Messages {
		if d.decodes(msg) && !done[msg.Root] {
			done[msg.Root] = true
			decodeRoot(f, msg.Root, msg.JSONDecodeFunc)
			f.Line()
		}
	}
}
