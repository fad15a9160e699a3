package acemqimpl

import "github.com/acemq/acemq-go/runtime"

// PublishOptions holds the options of one publish of a generated
// publisher on its stack: the manifest's routing key, then the caller's
// options. A generated method declares one and passes With's slice to the
// runtime's call:
//
//	var o acemqimpl.PublishOptions
//	return runtime.Publish(ctx, p.c, orderPlacedType, "orders", m, o.With(runtime.WithRoutingKey("order.created"), opts)...)
//
// which gives runtime.Publish the options
// append([]runtime.PublishOption{key}, opts...) would, in the same order
// (a runtime.WithRoutingKey among opts wins), without allocating a slice
// for each call as that append does.
type PublishOptions struct{ buf [8]runtime.PublishOption }

// With is key, then opts: in o when they fit (up to seven options after
// key), else in a new slice. The slice is valid until o is used again.
func (o *PublishOptions) With(key runtime.PublishOption, opts []runtime.PublishOption) []runtime.PublishOption {
	if len(opts) >= len(o.buf) {
		return append([]runtime.PublishOption{key}, opts...)
	}
	o.buf[0] = key
	return o.buf[:1+copy(o.buf[1:], opts)]
}
