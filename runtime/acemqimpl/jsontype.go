package acemqimpl

import (
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
)

// JSONFuncs is the code acemq-gen generated for a JSON message type's
// payload, each part nil when there is none:
//
//   - Check: Publish (and Validate) check a value with it and ask the
//     reference validator only when it does not pass the value, so an
//     error is the same as runtime.NewJSONType's, its text the reference's.
//   - Shape (called once, on first use; with Check): Decode checks too,
//     json.Unmarshal, a scan of the body for what the struct cannot show
//     (missing and unknown members, nulls, the text of date-times), then
//     Check; a body any of them does not pass is decoded as
//     runtime.NewJSONType decodes it, by the reference.
//   - Encode: Publish, Request and a reply encode a value with it instead
//     of json.Marshal's reflection (the same bytes).
//   - Decode: a consumer's Decode reads a body with it first (the same
//     value, the same verdict); a body it does not take is decoded as
//     without it (json.Unmarshal, the shape's scan, the check, the
//     reference validator).
//
// runtime.WithReferenceValidation turns all four off on a connection.
type JSONFuncs struct {
	Check  JSONChecker
	Shape  func() *JSONShape
	Encode JSONEncoder
	Decode JSONDecodeFunc
}

// NewJSONType is runtime.NewJSONType with the generated code of fns.
// Generated code declares each JSON message type that has generated code
// with it, in one call:
//
//	var orderType = acemqimpl.NewJSONType[Order]("order.v1", orderSchema, acemqimpl.JSONFuncs{
//		Check:  acemqCheckOrder,
//		Decode: acemqDecodeOrder,
//		Encode: acemqEncodeOrder,
//		Shape:  acemqShapeOrder,
//	})
func NewJSONType[T any](name, schema string, fns JSONFuncs) *runtime.MessageType[T] {
	mt := runtime.NewJSONType[T](name, schema)
	if fns.Check != nil {
		msgtype.SetJSONCheck(mt, fns.Check, fns.Shape)
	}
	if fns.Encode != nil {
		msgtype.SetJSONEncoder(mt, fns.Encode)
	}
	if fns.Decode != nil {
		msgtype.SetJSONDecoder(mt, fns.Decode)
	}
	return mt
}
