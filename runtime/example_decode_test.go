package runtime_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/acemq/acemq-go/runtime"
	"github.com/hamba/avro/v2"
)

// A delivery pulled off a dead-letter queue is read back typed; one of
// another message type is refused before anything is decoded. (With a
// connection, Pull gives the delivery and DecodeDelivery its codec; the
// generated Decode<Message> funcs call it.)
func ExampleDecodeDelivery() {
	type Refund struct {
		ID string `json:"id"`
	}
	refundType := runtime.JSONType[Refund]("refund.v1", `{"type": "object"}`)
	d := &runtime.Delivery{Type: "order.placed.v2", Body: []byte(`{"id": "R-1"}`)}
	_, err := runtime.DecodeDelivery(context.Background(), nil, refundType, d)
	fmt.Println(errors.Is(err, runtime.ErrOtherType))
	fmt.Println(err)
	// Output:
	// true
	// acemq: the delivery is of another message type: it is "order.placed.v2", not "refund.v1"
}

// ConvertAvroBranch turns the generic value hamba/avro decodes for a union
// branch into the branch's Go type, found at a path in the schema: here
// field 0's union, branch 1.
func ExampleConvertAvroBranch() {
	type Point struct {
		X int32 `avro:"x"`
	}
	root := func() (avro.Schema, error) {
		return avro.Parse(`{"type": "record", "name": "R", "fields": [{"name": "v", "type": ["null",
			{"type": "record", "name": "Point", "fields": [{"name": "x", "type": "int"}]}]}]}`)
	}
	var p Point
	err := runtime.ConvertAvroBranch(root, []int{0, 1}, map[string]any{"x": int32(7)}, &p)
	fmt.Println(p.X, err)
	// Output:
	// 7 <nil>
}
