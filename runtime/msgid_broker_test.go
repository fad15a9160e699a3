package runtime_test

// A producer's own message id (issue 37, item 2): WithMessageID sets
// x-acemq-id and message_id; x-acemq-id among WithHeaders is refused, not
// replaced.

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

func TestPublishWithMessageIDSetsTheIdentity(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "msgid")
	rawQueue(t, q, nil)
	c := dial(t)
	const id = "order-A-17:placed"
	publishText(t, c, q, "first", runtime.WithMessageID(id))
	publishText(t, c, q, "again", runtime.WithMessageID(id)) // the producer's re-publish
	publishText(t, c, q, "fresh")
	ds := drain(t, q, 3, wait)
	for i, d := range ds[:2] {
		if got := headerString(t, d, wire.HeaderID); got != id || d.MessageId != id {
			t.Errorf("message %d: x-acemq-id %q, message_id %q; want both %q", i, got, d.MessageId, id)
		}
		if a, ok := d.Headers[wire.HeaderAttempt].(int64); !ok || a != 1 {
			t.Errorf("message %d: x-acemq-attempt = %#v, want int64(1)", i, d.Headers[wire.HeaderAttempt])
		}
	}
	if got := headerString(t, ds[2], wire.HeaderID); got == id || got != ds[2].MessageId {
		t.Errorf("a publish without WithMessageID: x-acemq-id %q, message_id %q; want a fresh id in both", got, ds[2].MessageId)
	}
}

func TestPublishRefusesTheIDAmongHeaders(t *testing.T) {
	t.Parallel()
	q := brokertest.Queue(t, "msgid-refused")
	rawQueue(t, q, nil)
	c := dial(t)
	ctx := ctxFor(t, 10*time.Second)
	err := runtime.Publish(ctx, c, textType, "", "forged", runtime.WithRoutingKey(q),
		runtime.WithHeaders(map[string]any{"tenant": "t1", wire.HeaderID: "mine"}))
	if !errors.Is(err, runtime.ErrInvalidMessage) || !strings.Contains(err.Error(), "x-acemq-id") || !strings.Contains(err.Error(), "WithMessageID") {
		t.Errorf("Publish with x-acemq-id among WithHeaders = %v; want an error matching ErrInvalidMessage naming x-acemq-id and WithMessageID", err)
	}
	if _, err := runtime.PublishAsync(ctx, c, textType, "", "forged", runtime.WithRoutingKey(q),
		runtime.WithHeaders(map[string]any{wire.HeaderID: "mine"})); !errors.Is(err, runtime.ErrInvalidMessage) {
		t.Errorf("PublishAsync with x-acemq-id among WithHeaders = %v; want an error matching ErrInvalidMessage", err)
	}
	for _, bad := range []string{"", strings.Repeat("i", 256)} {
		if err := runtime.Publish(ctx, c, textType, "", "bad id", runtime.WithRoutingKey(q), runtime.WithMessageID(bad)); !errors.Is(err, runtime.ErrInvalidMessage) {
			t.Errorf("Publish with WithMessageID of %d bytes = %v; want an error matching ErrInvalidMessage", len(bad), err)
		}
	}
	err = runtime.PublishBatch(ctx, c, textType, "", []string{"a", "b"}, runtime.WithRoutingKey(q), runtime.WithMessageID("one"))
	if !errors.Is(err, runtime.ErrInvalidMessage) {
		t.Errorf("PublishBatch of two messages with one WithMessageID = %v; want an error matching ErrInvalidMessage", err)
	}
	// Nothing of the above was sent.
	publishText(t, c, q, "good")
	if got := string(getOne(t, q, wait).Body); got != "good" {
		t.Errorf("body %q, want good (no refused publish may arrive)", got)
	}
}
