package drain_test

import (
	"context"
	"fmt"
	"time"

	"github.com/acemq/acemq-go/drain"
	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// ExampleCheck asks whether orders.new drains, counting an oldest message
// over five minutes as not draining.
func ExampleCheck() {
	mc, err := rabbithole.NewClient("http://127.0.0.1:15672", "guest", "guest")
	if err != nil {
		return
	}
	r, err := drain.Check(context.Background(), mc, "/", "orders.new", drain.Options{MaxAge: 5 * time.Minute})
	if err != nil {
		return
	}
	fmt.Printf("%s: depth %d, draining %v (%s)\n", r.Queue, r.Depth, r.Draining, r.Why)
}
