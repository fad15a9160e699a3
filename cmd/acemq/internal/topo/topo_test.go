package topo

import "testing"

// Arguments compare by value across the types AMQP and JSON give (an
// int64 declared, a float64 read back); an absent x-queue-type is classic.
func TestArgs(t *testing.T) {
	broker := queueArgs(map[string]any{"x-message-ttl": float64(40000), "x-dead-letter-exchange": ""})
	wanted := queueArgs(map[string]any{"x-message-ttl": int64(40000), "x-dead-letter-exchange": "", "x-queue-type": "quorum"})
	diffs := args("queue", "q.retry.40s", broker, wanted)
	if len(diffs) != 1 || diffs[0].String() != "queue q.retry.40s: x-queue-type is classic on the broker, quorum in the manifest" {
		t.Fatalf("diffs %v", diffs)
	}
	diffs = args("queue", "q", queueArgs(map[string]any{"x-max-length": float64(10)}), queueArgs(nil))
	if len(diffs) != 1 || diffs[0].String() != "queue q: x-max-length is 10 on the broker, absent in the manifest" {
		t.Fatalf("diffs %v", diffs)
	}
	if got := (Difference{Kind: "binding", Name: "q", Exchange: "orders", RoutingKey: "k", Missing: true}).String(); got != `missing binding q ← orders (routing key "k")` {
		t.Errorf("binding: %s", got)
	}
	if c := Conflicts([]Difference{{Kind: "queue", Name: "a", Missing: true}, diffs[0]}); len(c) != 1 || c[0].Name != "q" {
		t.Errorf("conflicts %v", c)
	}
}
