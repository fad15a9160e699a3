package runtime

import "testing"

// BenchmarkNewPublishing is the envelope a publish builds for each message:
// its x-acemq-id, first-seen, origin and the header table (docs/performance.md,
// "The publisher's CPU a message").
func BenchmarkNewPublishing(b *testing.B) {
	c := &Connection{cfg: dialConfig{origin: "bench@localhost"}, origin: "bench@localhost"}
	body := []byte("order")
	b.ReportAllocs()
	for b.Loop() {
		_ = c.newPublishing("acemq.test.text", ContentTypeText, body, publishConfig{})
	}
}
