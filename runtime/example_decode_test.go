package runtime_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/acemq/acemq-go/runtime"
)

// A delivery pulled off a dead-letter queue is read back typed; one of
// another message type is refused before anything is decoded. (With a
// connection, Pull gives the delivery and DecodeDelivery its codec; the
// generated Decode<Message> funcs call it.)
func ExampleDecodeDelivery() {
	type Refund struct {
		ID string `json:"id"`
	}
	refundType := runtime.NewJSONType[Refund]("refund.v1", `{"type": "object"}`)
	d := &runtime.Delivery{Type: "order.placed.v2", Body: []byte(`{"id": "R-1"}`)}
	_, err := runtime.DecodeDelivery(context.Background(), nil, refundType, d)
	fmt.Println(errors.Is(err, runtime.ErrOtherType))
	fmt.Println(err)
	// Output:
	// true
	// acemq: the delivery is of another message type: it is "order.placed.v2", not "refund.v1"
}
