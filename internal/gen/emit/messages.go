package emit

import (
	"fmt"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/internal/gen/oneline"
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/dave/jennifer/jen"
)

// messagesFile emits the version guard, then for each message its schema
// text and its message type variable.
func messagesFile(m *model.Model, source string) *jen.File {
	f := newFile(m, source)
	if m.Package != "main" {
		doc(func(s string) *jen.Statement { f.PackageComment(s); return nil }, "Package %s is the messaging code acemq-gen generated from %s: message types, retry policies, the topology, typed publishers and consumers over github.com/acemq/acemq-go/runtime. Edit the manifest and its schemas, then regenerate; do not edit these files.",
			m.Package, oneline.Quote(source))
	}
	// const _ = acemqimpl.SupportPackageIsVersion2
	f.Comment("This code and the runtime it calls must agree: a runtime that")
	f.Comment("dropped this version stops the package compiling.")
	f.Const().Id("_").Op("=").Add(impl("SupportPackageIsVersion2"))
	if m.Registry != nil {
		f.Line()
		registryVar(f, m.Registry)
	}
	enc, dec := newJSONEncoders(m), newJSONDecoders(m)
	for _, msg := range m.Messages {
		f.Line()
		// const orderPlacedSchema = "{...}"
		if msg.From != "" {
			doc(f.Comment, "%s is the schema of %s, from %q: the message is declared by %q, which the manifest imports.", msg.SchemaConst, msg.GoName, msg.SchemaPath, msg.From)
		} else {
			doc(f.Comment, "%s is the schema of %s, from %q.", msg.SchemaConst, msg.GoName, msg.SchemaPath)
		}
		textConst(f, msg.SchemaConst, msg.SchemaText)
		f.Line()
		messageTypeVar(f, msg, m.Registry, enc, dec)
	}
	return f
}

// registryVar emits an unexported variable, which the message types use,
// and a func returning it, so that no code outside the package can replace
// the registry:
//
//	var schemaRegistry = registry.OpenLazy(registry.Config{Directory: "schemas/registry"})
//
//	func SchemaRegistry() runtime.SchemaRegistry { return schemaRegistry }
func registryVar(f *jen.File, r *model.Registry) {
	fields := jen.Dict{}
	for key, v := range map[string]string{"Directory": r.Directory, "URL": r.URL,
		"UsernameEnv": r.UsernameEnv, "PasswordEnv": r.PasswordEnv, "TokenEnv": r.TokenEnv} {
		if v != "" {
			fields[jen.Id(key)] = jen.Lit(v)
		}
	}
	if r.Timeout > 0 {
		fields[jen.Id("Timeout")] = duration(r.Timeout)
	}
	if r.LookupOnly {
		fields[jen.Id("LookupOnly")] = jen.True()
	}
	where := "the directory " + r.Directory
	if r.URL != "" {
		where = "the Confluent-compatible registry at " + r.URL
	}
	doc(f.Comment, "%s is the manifest's registry: %s. The Avro message types use it unless the connection was dialled with runtime.WithSchemaRegistry; it opens on first use, and a consumer opens it before subscribing.",
		r.VarName, where)
	f.Var().Id(r.VarName).Op("=").Add(jen.Qual(regPkg, "OpenLazy").Call(jen.Qual(regPkg, "Config").Values(fields)))
	f.Line()
	doc(f.Comment, "%s returns the manifest's registry: %s, the one the Avro message types use unless the connection was dialled with runtime.WithSchemaRegistry.",
		r.GoName, where)
	f.Func().Id(r.GoName).Params().Add(rt("SchemaRegistry")).Block(jen.Return(jen.Id(r.VarName)))
}

// messageTypeVar emits an unexported variable, which the generated code
// uses, and a func returning it, so that no code outside the package can
// replace a message type:
//
//	var orderPlacedType = runtime.NewAvroType[OrderPlaced]("order.placed.v2", "orders", orderPlacedSchema)
//
//	func TypeOfOrderPlaced() *runtime.MessageType[OrderPlaced] { return orderPlacedType }
//
// A JSON message with generated code is declared in one call:
//
//	var orderType = acemqimpl.NewJSONType[Order](
//		"order.v1",
//		orderSchema,
//		acemqimpl.JSONFuncs{
//			Check:  acemqCheckOrder,
//			Decode: acemqDecodeOrder,
//			Encode: acemqEncodeOrder,
//			Shape:  acemqShapeOrder,
//		},
//	)
func messageTypeVar(f *jen.File, msg *model.Message, reg *model.Registry, enc *jsonEncoders, dec *jsonDecoders) {
	var fn func() *jen.Statement
	var args []jen.Code
	var what string
	switch msg.Format {
	case schema.Avro:
		what = fmt.Sprintf("the message type %q, payload %s: Avro in the Confluent wire format, its schema registered under the subject %q", msg.Type, msg.GoName, msg.Subject)
		args = []jen.Code{jen.Lit(msg.Type), jen.Lit(msg.Subject), jen.Id(msg.SchemaConst)}
		if reg != nil {
			args = append(args, rt("WithSchemaRegistry").Call(jen.Id(reg.VarName)))
		}
		fn = func() *jen.Statement { return rt("NewAvroType").Types(jen.Id(msg.GoName)) }
	default:
		what = fmt.Sprintf("the message type %q, payload %s: JSON, validated against its JSON Schema on publish and on consume", msg.Type, msg.GoName)
		args = []jen.Code{jen.Lit(msg.Type), jen.Id(msg.SchemaConst)}
		fn = func() *jen.Statement { return rt("NewJSONType").Types(jen.Id(msg.GoName)) }
		fns := jen.Dict{}
		if jsonChecked(msg) {
			what += ", checked in plain Go by " + msg.CheckFunc + " (the reference validator decides only what it does not pass)"
			fns[jen.Id("Check")], fns[jen.Id("Shape")] = jen.Id(msg.CheckFunc), jen.Id(msg.ShapeFunc)
		}
		if enc.encodes(msg) {
			what += ", encoded by " + msg.EncodeFunc + " (json.Marshal's bytes, without reflection)"
			fns[jen.Id("Encode")] = jen.Id(msg.EncodeFunc)
		}
		if dec.decodes(msg) {
			what += ", decoded in one pass by " + msg.JSONDecodeFunc + " (json.Unmarshal's value and the decode shape's scan)"
			fns[jen.Id("Decode")] = jen.Id(msg.JSONDecodeFunc)
		}
		if len(fns) > 0 {
			args = append(args, impl("JSONFuncs").Values(fns))
			fn = func() *jen.Statement { return impl("NewJSONType").Types(jen.Id(msg.GoName)) }
		}
	}
	doc(f.Comment, "%s is %s.", msg.VarName, what)
	f.Add(fitted(0, "", func(list *jen.Statement) *jen.Statement {
		return jen.Var().Id(msg.VarName).Op("=").Add(fn()).Add(list)
	}, args...))
	f.Line()
	doc(f.Comment, "%s returns %s.", msg.TypeFunc, what)
	f.Func().Id(msg.TypeFunc).Params().Op("*").Add(rt("MessageType")).Types(jen.Id(msg.GoName)).Block(jen.Return(jen.Id(msg.VarName)))
	f.Line()
	doc(f.Comment, "%s decodes a delivery taken by Pull or Browse (a dead letter, a parked message) as %s, with the codec the message type has on c. A delivery of another type is an error matching runtime.ErrOtherType.", msg.DecodeFunc, msg.GoName)
	params := []jen.Code{
		jen.Id("ctx").Qual(contextPkg, "Context"),
		jen.Id("c").Op("*").Add(rt("Connection")),
		jen.Id("d").Op("*").Add(rt("Delivery")),
	}
	f.Add(fitted(0, " {", func(list *jen.Statement) *jen.Statement {
		return jen.Func().Id(msg.DecodeFunc).Add(list).Params(jen.Id(msg.GoName), jen.Error())
	}, params...).Block(
		jen.Return(rt("DecodeDelivery").Call(jen.Id("ctx"), jen.Id("c"), jen.Id(msg.VarName), jen.Id("d"))),
	))
}

// jsonChecked says msg is a JSON message whose payload struct has a
// generated check.
func jsonChecked(msg *model.Message) bool {
	return msg.Format == schema.JSONSchema && msg.CheckFunc != "" && msg.ShapeFunc != "" && msg.Root != nil && msg.Root.Kind == schema.Struct && msg.Root.JSONCheck != nil && msg.Root.Name == msg.GoName
}
