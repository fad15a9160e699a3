package orders

import "github.com/acemq/acemq-go/runtime"

// ReferenceOrderJSONType is OrderJSON's message type as a service without
// generated code makes it (runtime.NewJSONType): the same name and schema,
// every message checked by the reference validator alone, where the
// generated type runs its generated checks first.
// acemqbench's runtime-only JSON cases use it (written by hand, not by
// acemq-gen).
func ReferenceOrderJSONType() *runtime.MessageType[OrderJSON] {
	return referenceOrderJSONType
}

var referenceOrderJSONType = runtime.NewJSONType[OrderJSON]("bench.order.json.v1", orderJSONSchema)
