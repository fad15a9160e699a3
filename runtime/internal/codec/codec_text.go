package codec

import (
	"context"
	"fmt"

	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/wire"
)

// textCodec is the text/plain codec of the untyped API.
type textCodec struct{}

// NewTextCodec returns the text/plain codec. Encode accepts a string, a
// []byte or a fmt.Stringer and writes its bytes unchanged; Decode fills a
// *string or a *[]byte with the body, byte for byte (no UTF-8 check: a body
// is kept as it came). Any other value or target is an error naming its Go
// type. It needs no registry and ignores ctx.
func NewTextCodec() msgtype.Codec { return textCodec{} }

// ContentType is text/plain.
func (textCodec) ContentType() string { return wire.ContentTypeText }

// Encode returns the bytes of v.
func (textCodec) Encode(_ context.Context, v any) (b []byte, err error) {
	defer codecRecover(&err, "text codec: encoding a %T", v)
	switch t := v.(type) {
	case string:
		return []byte(t), nil
	case *string:
		if t != nil {
			return []byte(*t), nil
		}
	case []byte:
		return append([]byte(nil), t...), nil
	case fmt.Stringer:
		if t != nil {
			return []byte(t.String()), nil
		}
	}
	return nil, fmt.Errorf("text codec cannot encode a %T: want a string, []byte or fmt.Stringer", v)
}

// Decode copies body into v, a *string or a *[]byte.
func (textCodec) Decode(_ context.Context, body []byte, v any) error {
	switch t := v.(type) {
	case *string:
		if t != nil {
			*t = string(body)
			return nil
		}
	case *[]byte:
		if t != nil {
			*t = append([]byte(nil), body...)
			return nil
		}
	}
	return fmt.Errorf("text codec cannot decode into a %T: want a non-nil *string or *[]byte", v)
}

// codecRecover turns a panic in a codec (a nil pointer behind an interface,
// a library bug on hostile input) into an error, so a bad message is parked
// or refused instead of crashing the consumer. Use it as
// `defer codecRecover(&err, "what was being done", args...)`.
func codecRecover(err *error, format string, args ...any) {
	if r := recover(); r != nil {
		*err = fmt.Errorf(format+": panic: %v", append(args, r)...)
	}
}
