package emit

import (
	"github.com/acemq/acemq-go/generator/model"
	"github.com/acemq/acemq-go/generator/schema"
	"github.com/dave/jennifer/jen"
)

// messagesFile emits the version guard, then for each message its schema
// text and its message type variable.
func messagesFile(m *model.Model, source string) *jen.File {
	f := newFile(m, source)
	// const _ = runtime.SupportPackageIsVersion1
	f.Comment("This code and the runtime it calls must agree: a runtime that")
	f.Comment("dropped this version stops the package compiling.")
	f.Const().Id("_").Op("=").Add(rt("SupportPackageIsVersion1"))
	for _, msg := range m.Messages {
		f.Line()
		// const orderPlacedSchema = "{...}"
		doc(f.Comment, "%s is the schema of %s, from %q.", msg.SchemaConst, msg.GoName, msg.SchemaPath)
		f.Const().Id(msg.SchemaConst).Op("=").Lit(msg.SchemaText)
		f.Line()
		messageTypeVar(f, msg)
	}
	return f
}

// messageTypeVar emits
//
//	var OrderPlacedType = runtime.AvroType[OrderPlaced]("order.placed.v2", "orders", orderPlacedSchema)
func messageTypeVar(f *jen.File, msg *model.Message) {
	var ctor *jen.Statement
	switch msg.Format {
	case schema.Avro:
		doc(f.Comment, "%s is the message type %q, payload %s: Avro in the Confluent wire format, its schema registered under the subject %q.",
			msg.VarName, msg.Type, msg.GoName, msg.Subject)
		ctor = rt("AvroType").Types(jen.Id(msg.GoName)).Call(jen.Lit(msg.Type), jen.Lit(msg.Subject), jen.Id(msg.SchemaConst))
	default:
		doc(f.Comment, "%s is the message type %q, payload %s: JSON, validated against its JSON Schema on publish and on consume.",
			msg.VarName, msg.Type, msg.GoName)
		ctor = rt("JSONType").Types(jen.Id(msg.GoName)).Call(jen.Lit(msg.Type), jen.Id(msg.SchemaConst))
	}
	f.Var().Id(msg.VarName).Op("=").Add(ctor)
}
