package acemqimpl_test

import (
	"reflect"
	"testing"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqimpl"
)

// With gives the routing key, then the caller's options, in order (a
// runtime.WithRoutingKey among them last, so it wins), on the stack for up
// to seven options and in a slice of its own beyond.
func TestPublishOptionsWith(t *testing.T) {
	key := runtime.WithRoutingKey("order.created")
	id, corr, other := runtime.WithMessageID("A-1"), runtime.WithCorrelationID("c"), runtime.WithRoutingKey("other")
	for _, opts := range [][]runtime.PublishOption{
		nil,
		{id},
		{id, corr, other},
		{id, id, id, id, id, id, id},
		{id, id, id, id, id, id, id, corr},
		{id, id, id, id, id, id, id, id, id, id, other},
	} {
		var o acemqimpl.PublishOptions
		got := o.With(key, opts)
		want := append([]runtime.PublishOption{key}, opts...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("With(key, %d options) = %v, want %v", len(opts), got, want)
		}
	}
	opts := []runtime.PublishOption{id, corr, other, id, corr, other, id}
	if n := testing.AllocsPerRun(100, func() {
		var o acemqimpl.PublishOptions
		use(o.With(key, opts)...)
	}); n != 0 {
		t.Errorf("With of seven options allocates %.1f times, want 0", n)
	}
}

//go:noinline
func use(opts ...runtime.PublishOption) int { return len(opts) }
