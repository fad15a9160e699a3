package runtime

import (
	"context"
	"fmt"

	"github.com/acemq/acemq-go/runtime/internal/core"
)

// ErrOtherType is returned by DecodeDelivery for a delivery whose type
// property is not the message type's.
var ErrOtherType = core.ErrOtherType

// DecodeDelivery decodes a delivery taken by Pull or Browse (a dead letter,
// a parked message) as a value of mt, with the codec mt has on c (its
// registry, for Avro). A delivery whose type property is another type's is
// an error matching ErrOtherType; one that does not decode says why. The
// generated code wraps it per message type: DecodeOrderPlaced(ctx, c, d).
func DecodeDelivery[T any](ctx context.Context, c *Connection, mt *MessageType[T], d *Delivery) (T, error) {
	var v T
	if d.Type != mt.Name() {
		return v, fmt.Errorf("%w: it is %q, not %q", ErrOtherType, d.Type, mt.Name())
	}
	codec, err := core.CodecFor(mt, connLink{c})
	if err != nil {
		return v, err
	}
	if err := codec.Decode(ctx, d.Body, &v); err != nil {
		return v, fmt.Errorf("message type %q: %w", mt.Name(), err)
	}
	return v, nil
}
