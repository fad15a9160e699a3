package runtime

import (
	"github.com/acemq/acemq-go/runtime/wire"
	"testing"
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
