package emit

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/dave/jennifer/jen"
)

// The generated JSON encoders (issue 21, item 5): each struct a JSON
// message's payload reaches gets
//
//	func (v *Order) acemqAppendJSON(b []byte) ([]byte, bool)
//
// which appends exactly the bytes json.Marshal writes for *v (field order,
// omitempty, encoding/json's string escaping and float formatting, nil
// slices and maps as null), and each such message a
//
//	func acemqEncodeOrder(v any, b []byte) ([]byte, bool)
//
// that its message type is given as acemqimpl.JSONFuncs.Encode. A value of
// a kind the encoder does not write out is appended as json.Marshal
// writes it (acemqimpl.AppendJSONValue); whatever json.Marshal would
// refuse (NaN, a time out of range) makes the encoder return false, and the
// codec calls json.Marshal, whose error is the codec's. A MarshalJSON
// method would not do: encoding/json re-scans what one returns.

const (
	encName    = "acemqAppendJSON"
	strconvPkg = "strconv"
	mathPkg    = "math"
)

// jsonEncoders is which structs get an encoder method, and the member
// key each field is written with ("" for a field encoding/json skips).
type jsonEncoders struct {
	order []*schema.Type
	keys  map[*schema.Type][]string
}

// newJSONEncoders finds the structs the JSON messages' payloads reach;
// a struct gets an encoder when encoding/json would write each of its
// fields under a key of its own and the encoder knows when each is empty.
func newJSONEncoders(m *model.Model) *jsonEncoders {
	e := &jsonEncoders{keys: map[*schema.Type][]string{}}
	if m.Types == nil {
		return e
	}
	reach := map[*schema.Type]bool{}
	var walk func(r *schema.TypeRef)
	walkType := func(t *schema.Type) {
		if reach[t] {
			return
		}
		reach[t] = true
		switch t.Kind {
		case schema.Struct:
			for _, fd := range t.Fields {
				walk(fd.Type)
			}
		case schema.Alias:
			walk(t.Target)
		}
	}
	walk = func(r *schema.TypeRef) {
		switch {
		case r.Kind == schema.Named:
			walkType(r.Named)
		case r.Elem != nil:
			walk(r.Elem)
		}
	}
	for _, msg := range m.Messages {
		if msg.Format == schema.JSONSchema && msg.Root != nil && msg.Root.Kind == schema.Struct && msg.Root.Name == msg.GoName {
			walkType(msg.Root)
		}
	}
	for _, t := range m.Types.Types {
		if t.Kind != schema.Struct || !reach[t] {
			continue
		}
		if keys, ok := structKeys(t); ok {
			e.keys[t] = keys
			e.order = append(e.order, t)
		}
	}
	return e
}

// has says struct t has an encoder method.
func (e *jsonEncoders) has(t *schema.Type) bool { _, ok := e.keys[t]; return ok }

// encodes says msg's message type gets the generated encoder.
func (e *jsonEncoders) encodes(msg *model.Message) bool {
	return msg.EncodeFunc != "" && msg.Format == schema.JSONSchema && msg.Root != nil && msg.Root.Name == msg.GoName && e.has(msg.Root)
}

// structKeys is the member key, as encoding/json writes it with its
// quotes and colon, of each field of t ("" for a field it skips): taken
// from encoding/json itself, by marshalling a struct with the field's tag,
// so that its rules for tags (invalid names fall back to the Go name, "-"
// skips) and its escaping of the key hold. False when two fields would
// share a key (encoding/json then drops both) or a field's emptiness is
// unknown.
func structKeys(t *schema.Type) ([]string, bool) {
	keys := make([]string, len(t.Fields))
	seen := map[string]bool{}
	for i, fd := range t.Fields {
		if fd.Tags.OmitEmpty {
			if _, ok := nonEmpty(jen.Id("x"), fd.Type); !ok {
				return nil, false
			}
		}
		var tag reflect.StructTag
		if fd.Tags.JSON {
			tag = reflect.StructTag("json:" + strconv.Quote(typTags(fd)["json"]))
		}
		st := reflect.StructOf([]reflect.StructField{{Name: fd.GoName, Type: reflect.TypeFor[string](), Tag: tag}})
		v := reflect.New(st).Elem()
		v.Field(0).SetString("v")
		out, err := json.Marshal(v.Interface())
		if err != nil {
			return nil, false
		}
		s := string(out)
		if s == "{}" {
			continue // skipped
		}
		const tail = `"v"}`
		if len(s) < 2+len(tail) || s[len(s)-len(tail):] != tail {
			return nil, false
		}
		key := s[1 : len(s)-len(tail)]
		if seen[key] {
			return nil, false
		}
		seen[key] = true
		keys[i] = key
	}
	return keys, true
}

// nonEmpty is the condition that x, of Go type r, is not empty as
// encoding/json's omitempty sees it (nil when it never is: a struct);
// false when it cannot tell.
func nonEmpty(x *jen.Statement, r *schema.TypeRef) (jen.Code, bool) {
	switch r.Kind {
	case schema.Builtin:
		switch r.Name {
		case "string":
			return x.Clone().Op("!=").Lit(""), true
		case "bool":
			return x.Clone(), true
		case "int", "int32", "int64", "byte":
			return x.Clone().Op("!=").Lit(0), true
		case "float32", "float64":
			// IsZero: -0 is not empty.
			return jen.Qual(mathPkg, "Float64bits").Call(jen.Float64().Call(x.Clone())).Op("!=").Lit(0), true
		case "struct{}":
			return nil, true
		}
	case schema.Qual:
		switch r.Pkg + "." + r.Name {
		case "time.Time", "math/big.Rat":
			return nil, true
		case "encoding/json.RawMessage":
			return jen.Len(x.Clone()).Op("!=").Lit(0), true
		case "time.Duration":
			return x.Clone().Op("!=").Lit(0), true
		}
	case schema.Named:
		switch r.Named.Kind {
		case schema.Struct, schema.Union:
			return nil, true
		case schema.Enum:
			return x.Clone().Op("!=").Lit(""), true
		case schema.Alias:
			return nonEmpty(x, r.Named.Target)
		}
	case schema.Pointer:
		return x.Clone().Op("!=").Nil(), true
	case schema.Slice, schema.Map:
		return jen.Len(x.Clone()).Op("!=").Lit(0), true
	case schema.Array:
		if r.Len == 0 {
			return jen.False(), true
		}
		return nil, true
	}
	return nil, false
}

// encBody collects an encoder's statements, merging the constant bytes
// appended in a row into one append.
type encBody struct {
	stmts   []jen.Code
	pending string
	ok      *bool // set when a statement assigns ok
}

func (eb *encBody) lit(s string) { eb.pending += s }

func (eb *encBody) flush() {
	switch {
	case eb.pending == "":
		return
	case len(eb.pending) == 1 && eb.pending[0] < utf8.RuneSelf:
		eb.stmts = append(eb.stmts, jen.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune(rune(eb.pending[0]))))
	default:
		eb.stmts = append(eb.stmts, jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit(eb.pending).Op("...")))
	}
	eb.pending = ""
}

func (eb *encBody) add(c ...jen.Code) {
	eb.flush()
	eb.stmts = append(eb.stmts, c...)
}

// sub is a body for a nested block sharing eb's ok flag.
func (eb *encBody) sub() *encBody { return &encBody{ok: eb.ok} }

func (eb *encBody) done() []jen.Code {
	eb.flush()
	return eb.stmts
}

// fallible adds `if b, ok = call; !ok { return b, false }`.
func (eb *encBody) fallible(call jen.Code) {
	*eb.ok = true
	eb.add(jen.If(jen.List(jen.Id("b"), jen.Id("ok")).Op("=").Add(call), jen.Op("!").Id("ok")).Block(
		jen.Return(jen.Id("b"), jen.False())))
}

// value appends x, of Go type r, to b as encoding/json writes it.
func (e *jsonEncoders) value(eb *encBody, x *jen.Statement, r *schema.TypeRef, depth int) {
	e.valueIn(eb, x, r, depth, false)
}

// valueIn is value; set says x is known not to be nil (an omitempty
// field the encoder found non-empty).
func (e *jsonEncoders) valueIn(eb *encBody, x *jen.Statement, r *schema.TypeRef, depth int, set bool) {
	// present is where the value of a nil-able x is written: eb when x is
	// known set, else the else branch of orNull's if x == nil.
	present := func() *encBody {
		if set {
			return eb
		}
		return eb.sub()
	}
	orNull := func(p *encBody) {
		if p == eb {
			return
		}
		eb.add(jen.If(x.Clone().Op("==").Nil()).Block(jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit("null").Op("..."))).Else().Block(p.done()...))
	}
	fallback := func() { eb.fallible(impl("AppendJSONValue").Call(jen.Id("b"), x.Clone())) }
	switch r.Kind {
	case schema.Builtin:
		if !e.builtin(eb, x, r.Name, false) {
			fallback()
		}
	case schema.Qual:
		if r.Pkg == timePkg && r.Name == "Time" {
			eb.fallible(impl("AppendJSONTime").Call(jen.Id("b"), x.Clone()))
			return
		}
		fallback()
	case schema.Named:
		t := r.Named
		switch {
		case t.Kind == schema.Struct && e.has(t):
			eb.fallible(x.Clone().Dot(encName).Call(jen.Id("b")))
		case t.Kind == schema.Enum:
			e.builtin(eb, x, "string", true)
		case t.Kind == schema.Alias && t.GoAlias:
			e.valueIn(eb, x, t.Target, depth, set)
		case t.Kind == schema.Alias && t.Target.Kind == schema.Builtin:
			if !e.builtin(eb, x, t.Target.Name, true) {
				fallback()
			}
		case t.Kind == schema.Alias && (t.Target.Kind == schema.Slice || t.Target.Kind == schema.Map):
			e.valueIn(eb, x, t.Target, depth, set)
		default:
			fallback()
		}
	case schema.Pointer:
		inner := present()
		if r.Elem.Kind == schema.Named && r.Elem.Named.Kind == schema.Struct && e.has(r.Elem.Named) {
			e.value(inner, x, r.Elem, depth) // the method takes the pointer
		} else {
			e.value(inner, jen.Parens(jen.Op("*").Add(x.Clone())), r.Elem, depth)
		}
		orNull(inner)
	case schema.Slice:
		if r.Elem.Kind == schema.Builtin && r.Elem.Name == "byte" {
			fallback() // base64
			return
		}
		i := jen.Id(fmt.Sprintf("i%d", depth))
		elems := eb.sub()
		elems.add(jen.If(i.Clone().Op(">").Lit(0)).Block(jen.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune(','))))
		e.value(elems, x.Clone().Index(i.Clone()), r.Elem, depth+1)
		list := present()
		list.lit("[")
		list.add(jen.For(i.Clone().Op(":=").Range().Add(x.Clone())).Block(elems.done()...))
		list.lit("]")
		orNull(list)
	case schema.Map:
		i := jen.Id(fmt.Sprintf("i%d", depth))
		k := jen.Id(fmt.Sprintf("k%d", depth))
		el := jen.Id(fmt.Sprintf("e%d", depth))
		elems := eb.sub()
		elems.add(jen.If(i.Clone().Op(">").Lit(0)).Block(jen.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune(','))))
		elems.add(jen.Id("b").Op("=").Add(impl("AppendJSONString")).Call(jen.Id("b"), k.Clone()))
		elems.lit(":")
		elems.add(el.Clone().Op(":=").Add(x.Clone()).Index(k.Clone()))
		e.value(elems, el.Clone(), r.Elem, depth+1)
		list := present()
		list.lit("{")
		list.add(jen.For(jen.List(i.Clone(), k.Clone()).Op(":=").Range().Add(impl("JSONMapKeys")).Call(x.Clone())).Block(elems.done()...))
		list.lit("}")
		orNull(list)
	default:
		fallback()
	}
}

// builtin appends x, of (or, with conv, convertible to) the predeclared
// type name; false for a type it does not write out.
func (e *jsonEncoders) builtin(eb *encBody, x *jen.Statement, name string, conv bool) bool {
	as := func(c jen.Code) jen.Code {
		if conv {
			return jen.Add(c).Call(x.Clone())
		}
		return x.Clone()
	}
	switch name {
	case "string":
		eb.add(jen.Id("b").Op("=").Add(impl("AppendJSONString")).Call(jen.Id("b"), as(jen.String())))
	case "bool":
		eb.add(jen.Id("b").Op("=").Qual(strconvPkg, "AppendBool").Call(jen.Id("b"), as(jen.Bool())))
	case "int64":
		eb.add(jen.Id("b").Op("=").Qual(strconvPkg, "AppendInt").Call(jen.Id("b"), as(jen.Int64()), jen.Lit(10)))
	case "int", "int32":
		eb.add(jen.Id("b").Op("=").Qual(strconvPkg, "AppendInt").Call(jen.Id("b"), jen.Int64().Call(x.Clone()), jen.Lit(10)))
	case "float64":
		eb.fallible(impl("AppendJSONFloat64").Call(jen.Id("b"), as(jen.Float64())))
	case "float32":
		eb.fallible(impl("AppendJSONFloat32").Call(jen.Id("b"), as(jen.Float32())))
	default:
		return false
	}
	return true
}

// typEncoder emits the encoder method of struct t.
func (e *jsonEncoders) typEncoder(f *jen.File, t *schema.Type) {
	usesOK := false
	eb := &encBody{ok: &usesOK}
	eb.lit("{")
	written, maybe, dynamic := false, false, false // a field surely written, perhaps written; a comma decided at run time
	for i, fd := range t.Fields {
		key := e.keys[t][i]
		if key == "" {
			continue
		}
		x := jen.Id("v").Dot(fd.GoName)
		var cond jen.Code
		if fd.Tags.OmitEmpty {
			cond, _ = nonEmpty(x, fd.Type)
		}
		target := eb
		if cond != nil {
			target = eb.sub()
		}
		switch {
		case written:
			target.lit("," + key)
		case maybe:
			dynamic = true
			target.add(jen.If(jen.Len(jen.Id("b")).Op(">").Id("start").Op("+").Lit(1)).Block(jen.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune(','))))
			target.lit(key)
		default:
			target.lit(key)
		}
		e.valueIn(target, x, fd.Type, 1, cond != nil)
		if cond != nil {
			eb.add(jen.If(cond).Block(target.done()...))
			maybe = true
		} else {
			written = true
		}
	}
	eb.lit("}")
	body := eb.done()
	var decls []jen.Code
	if dynamic {
		decls = append(decls, jen.Id("start").Op(":=").Len(jen.Id("b")))
	}
	if usesOK {
		decls = append(decls, jen.Var().Id("ok").Bool())
	}
	body = append(append(decls, body...), jen.Return(jen.Id("b"), jen.True()))
	doc(f.Comment, "%s appends v to b exactly as json.Marshal writes it; false when json.Marshal would fail (the codec then calls it).", encName)
	f.Func().Params(jen.Id("v").Op("*").Id(t.Name)).Id(encName).Params(jen.Id("b").Index().Byte()).Params(jen.Index().Byte(), jen.Bool()).Block(body...)
}

// encodeRoot emits the func a message type is given as
// acemqimpl.JSONFuncs.Encode:
//
//	func acemqEncodeOrder(v any, b []byte) ([]byte, bool)
func encodeRoot(f *jen.File, t *schema.Type, fn string) {
	doc(f.Comment, "%s is the generated encoder of %s (acemqimpl.JSONEncoder): json.Marshal's bytes appended to b, false for a value it does not take.", fn, t.Name)
	f.Func().Id(fn).Params(jen.Id("v").Any(), jen.Id("b").Index().Byte()).Params(jen.Index().Byte(), jen.Bool()).Block(
		jen.Switch(jen.Id("x").Op(":=").Id("v").Assert(jen.Type())).Block(
			jen.Case(jen.Id(t.Name)).Block(jen.Return(jen.Id("x").Dot(encName).Call(jen.Id("b")))),
			jen.Case(jen.Op("*").Id(t.Name)).Block(
				jen.If(jen.Id("x").Op("!=").Nil()).Block(jen.Return(jen.Id("x").Dot(encName).Call(jen.Id("b")))),
			),
		),
		jen.Return(jen.Id("b"), jen.False()),
	)
}

// encodersCode adds the encoders of m to f: the methods, then one func
// per message type.
func encodersCode(f *jen.File, m *model.Model) {
	e := newJSONEncoders(m)
	for _, t := range e.order {
		e.typEncoder(f, t)
		f.Line()
	}
	done := map[*schema.Type]bool{}
	for _, msg := range m.Messages {
		if e.encodes(msg) && !done[msg.Root] {
			done[msg.Root] = true
			encodeRoot(f, msg.Root, msg.EncodeFunc)
			f.Line()
		}
	}
}
