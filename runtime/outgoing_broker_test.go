package runtime_test

// The outbox's API (NewOutgoing, Connection.PublishOutgoing) against the
// broker: a message built and not sent, then sent as it was built.

import (
	"errors"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// NewOutgoing builds the message Publish would send and sends nothing;
// PublishOutgoing sends it later as it was built: the same body, message
// id and x-acemq-id, the routing key and the ordering key given,
// mandatory as Publish's messages are (an unroutable one is an error).
func TestOutgoingIsSentAsBuilt(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "outgoing")
	rawQueue(t, q, nil)
	c := dial(t)
	ctx := ctxFor(t, wait)

	o, err := runtime.NewOutgoing(ctx, c, textType, "", "stored", runtime.WithRoutingKey(q),
		runtime.WithOrderingKey("customer-7"), runtime.WithHeaders(map[string]any{"tenant": "acme"}))
	if err != nil {
		t.Fatalf("NewOutgoing: %v", err)
	}
	if o.Exchange != "" || o.RoutingKey != q || o.OrderingKey != "customer-7" || !o.Mandatory {
		t.Errorf("NewOutgoing = exchange %q, key %q, ordering key %q, mandatory %v; want \"\", %q, customer-7, true",
			o.Exchange, o.RoutingKey, o.OrderingKey, o.Mandatory, q)
	}
	id, _ := o.Msg.Headers[wire.HeaderID].(string)
	if id == "" || string(o.Msg.Body) != "stored" || o.Msg.Type != textType.Name() || o.Msg.Headers["tenant"] != "acme" {
		t.Fatalf("NewOutgoing's message: body %q, type %q, headers %v; want body stored, type %s, an %s and tenant=acme",
			o.Msg.Body, o.Msg.Type, o.Msg.Headers, textType.Name(), wire.HeaderID)
	}
	if got := depth(t, q); got != 0 {
		t.Fatalf("NewOutgoing sent something: %s holds %d", q, got)
	}

	p, err := c.PublishOutgoing(ctx, o)
	if err != nil {
		t.Fatalf("PublishOutgoing: %v", err)
	}
	if err := p.Wait(ctx); err != nil {
		t.Fatalf("PublishOutgoing's confirm: %v", err)
	}
	ds := drain(t, q, 1, wait)
	if len(ds) != 1 {
		t.Fatalf("%s: %d messages after PublishOutgoing, want 1", q, len(ds))
	}
	d := ds[0]
	if string(d.Body) != "stored" || d.MessageId != o.Msg.MessageId || d.Headers[wire.HeaderID] != id || d.Headers["tenant"] != "acme" {
		t.Errorf("delivered: body %q, message id %q, %s %v, tenant %v; want stored, %q, %q, acme",
			d.Body, d.MessageId, wire.HeaderID, d.Headers[wire.HeaderID], d.Headers["tenant"], o.Msg.MessageId, id)
	}
}

// What AMQP cannot carry is refused by both: NewOutgoing as Publish
// refuses it, and PublishOutgoing for a message a store gives back
// changed (a row written into an outbox table by other means), with
// ErrInvalidMessage and nothing written.
func TestOutgoingRefusesWhatPublishRefuses(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "outgoingbad")
	rawQueue(t, q, nil)
	c := dial(t)
	ctx := ctxFor(t, wait)
	long := strings.Repeat("k", 256)

	_, err := runtime.NewOutgoing(ctx, c, textType, "", "x", runtime.WithRoutingKey(long))
	if !errors.Is(err, runtime.ErrInvalidMessage) {
		t.Errorf("NewOutgoing with a 256-byte routing key = %v, want ErrInvalidMessage", err)
	}
	o, err := runtime.NewOutgoing(ctx, c, textType, "", "x", runtime.WithRoutingKey(q))
	if err != nil {
		t.Fatal(err)
	}
	o.RoutingKey = long
	p, err := c.PublishOutgoing(ctx, o)
	var pe *runtime.PublishError
	if p != nil || !errors.Is(err, runtime.ErrInvalidMessage) || !errors.As(err, &pe) || pe.RoutingKey != long {
		t.Errorf("PublishOutgoing with a 256-byte routing key = %v, %v; want nil and a *PublishError matching ErrInvalidMessage", p, err)
	}
	if got := depth(t, q); got != 0 {
		t.Errorf("%s holds %d after two refusals, want 0", q, got)
	}
}
