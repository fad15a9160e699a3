package runtime

import (
	"testing"

	"github.com/acemq/acemq-go/runtime/wire"
)

// BenchmarkNewPublishing is the envelope a publish builds for each message:
// its x-acemq-id, first-seen, origin and the header table (bench/NOTES.md,
// "The publisher's CPU a message").
func BenchmarkNewPublishing(b *testing.B) {
	c := &Connection{cfg: dialConfig{origin: "bench@localhost"}, origin: "bench@localhost"}
	body := []byte("order")
	b.ReportAllocs()
	for b.Loop() {
		_ = c.newPublishing("acemq.test.text", wire.ContentTypeText, body, publishConfig{})
	}
}

// TestPublishConfigOf: the options apply in order, the later winning, the
// routing key and correlation id (set without a call through the
// interface) among the others; those two alone allocate nothing.
func TestPublishConfigOf(t *testing.T) {
	cfg := publishConfigOf([]PublishOption{
		WithRoutingKey("a"), WithHeaders(map[string]any{"h": 1}), WithCorrelationID("c1"), WithoutMandatory(),
		WithRoutingKey("b"), WithOrderingKey("o"), WithHeaders(map[string]any{"h": 2, "i": 3}), WithCorrelationID("c2"),
	})
	if cfg.routingKey != "b" || cfg.correlationID != "c2" || !cfg.noMandatory || !cfg.orderingKeySet || cfg.orderingKey != "o" ||
		len(cfg.headers) != 2 || cfg.headers["h"] != 2 || cfg.headers["i"] != 3 {
		t.Fatalf("publishConfigOf: %+v", cfg)
	}
	if cfg := publishConfigOf(nil); cfg.routingKey != "" || cfg.headers != nil || cfg.noMandatory {
		t.Fatalf("publishConfigOf(nil): %+v", cfg)
	}
	if n := testing.AllocsPerRun(100, func() {
		cfg := publishConfigOf([]PublishOption{WithRoutingKey("avro"), WithCorrelationID("c")})
		if cfg.routingKey != "avro" {
			t.Fatal(cfg)
		}
	}); n != 0 {
		t.Fatalf("a routing key and a correlation id: %.1f allocations", n)
	}
}

// TestNewPublishingAllocations: the envelope of a fresh message costs six
// allocations: the table and its group, google/uuid's 16 random bytes
// (read through an io.Reader), the id and first-seen's one string, and
// their two boxes (origin and the schema fingerprint are boxed once).
func TestNewPublishingAllocations(t *testing.T) {
	c := &Connection{cfg: dialConfig{origin: "o"}, origin: "o"}
	body := []byte("x")
	if n := testing.AllocsPerRun(200, func() {
		_ = c.newPublishing("t", wire.ContentTypeText, body, publishConfig{})
	}); n > 6 {
		t.Fatalf("newPublishing: %.1f allocations, want at most 6", n)
	}
}
