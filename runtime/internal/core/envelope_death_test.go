package core

import (
	"testing"

	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// What the broker writes when it dead-letters, as 3.10 and 4.0 write it,
// and how the envelope reads it.
func TestEnvelopeReadsTheBrokersDeadLettering(t *testing.T) {
	death := func(queue, reason string) amqp.Table {
		return amqp.Table{"queue": queue, "reason": reason, "count": int64(1), "exchange": ""}
	}
	for _, c := range []struct {
		name         string
		headers      map[string]any
		error, queue string
	}{
		{"3.10 delivery limit", map[string]any{
			"x-death":              []any{death("orders.new", "delivery_limit")},
			"x-first-death-queue":  "orders.new",
			"x-first-death-reason": "delivery_limit",
		}, "dead-lettered by the broker: delivery_limit", "orders.new"},
		{"4.0: the last death wins over the first", map[string]any{
			"x-death":              []any{death("orders.new", "delivery_limit"), death("orders.new.retry.40s", "expired")},
			"x-first-death-queue":  "orders.new.retry.40s",
			"x-first-death-reason": "expired",
			"x-last-death-queue":   "orders.new",
			"x-last-death-reason":  "delivery_limit",
		}, "dead-lettered by the broker: delivery_limit", "orders.new"},
		{"3.10: x-death's head is the latest", map[string]any{
			"x-death":              []any{death("orders.new", "delivery_limit"), death("orders.new.retry.40s", "expired")},
			"x-first-death-queue":  "orders.new.retry.40s",
			"x-first-death-reason": "expired",
		}, "dead-lettered by the broker: delivery_limit", "orders.new"},
		{"only x-first-death-*", map[string]any{
			"x-first-death-queue": "orders.new", "x-first-death-reason": "maxlen",
		}, "dead-lettered by the broker: maxlen", "orders.new"},
		{"a mid-ladder reason is kept after the broker's", map[string]any{
			"x-death":        []any{death("orders.new", "delivery_limit")},
			wire.HeaderError: "timeout",
			wire.HeaderID:    "m-1",
		}, "dead-lettered by the broker: delivery_limit (last failure: timeout)", "orders.new"},
		{"back from a rung: the ladder, not a death", map[string]any{
			"x-death":        []any{death("orders.new.retry.40s", "expired")},
			wire.HeaderError: "timeout",
		}, "timeout", ""},
		{"a TTL of the queue itself is a death", map[string]any{
			"x-death": []any{death("orders.new", "expired")},
		}, "dead-lettered by the broker: expired", "orders.new"},
		{"the runtime's own dead letter is left alone", map[string]any{
			"x-death":        []any{death("orders.new", "rejected")},
			wire.HeaderError: "gave up after 4 attempts: down",
			wire.HeaderQueue: "orders.new",
		}, "gave up after 4 attempts: down", "orders.new"},
		{"no death", map[string]any{wire.HeaderError: "timeout"}, "timeout", ""},
		{"garbled x-death", map[string]any{"x-death": "nonsense"}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := EnvelopeOf(c.headers, "id", "", "t", "")
			if e.Error != c.error || e.Queue != c.queue {
				t.Errorf("Error %q Queue %q, want %q %q", e.Error, e.Queue, c.error, c.queue)
			}
		})
	}
}
