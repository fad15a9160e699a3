// Package goldentest helps the tests of the golden packages: their queue
// and exchange names are fixed by their manifests, so each test starts from
// and leaves behind a broker without them.
package goldentest

import (
	"context"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
)

// Connect dials the test broker (skipping, or failing under CI=true, when
// there is none), deletes every queue and exchange of topo, declares topo,
// and deletes them all again at the end of the test.
func Connect(t *testing.T, topo *runtime.Topology) (context.Context, *runtime.Connection) {
	t.Helper()
	url := brokertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	Clean(t, topo)
	t.Cleanup(func() { Clean(t, topo) })
	conn, err := runtime.Dial(ctx, url, runtime.WithOrigin("golden@test"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn.Close(ctx)
	})
	if err := conn.Declare(ctx, topo); err != nil {
		t.Fatalf("declare the generated topology: %v", err)
	}
	return ctx, conn
}

// Clean deletes the queues of topo (with their .dlq, .parked and rungs) and
// its exchanges.
func Clean(t *testing.T, topo *runtime.Topology) {
	for _, q := range topo.Queues {
		brokertest.DeleteQueues(t, q.Name)
	}
	_, ch := brokertest.Raw(t)
	for _, x := range topo.Exchanges {
		_ = ch.ExchangeDelete(x.Name, false, false)
	}
	if topo.Delay != "" && topo.DelayPrefix != "" { // never the shared acemq.delay
		for n := range wire.DelayLevels {
			_, _ = ch.QueueDelete(wire.DelayLevel(topo.DelayPrefix, n), false, false, false)
			_ = ch.ExchangeDelete(wire.DelayLevel(topo.DelayPrefix, n), false, false)
		}
		_ = ch.ExchangeDelete(wire.DelayDelivery(topo.DelayPrefix), false, false)
	}
}

// Receive waits for one value on c, failing the test after 15 seconds.
func Receive[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(15 * time.Second):
		t.Fatalf("no %s within 15s", what)
	}
	var zero T
	return zero
}

// CheckEnvelope checks what every first delivery carries.
func CheckEnvelope(t *testing.T, e runtime.Envelope, typ string) {
	t.Helper()
	if e.ID == "" {
		t.Errorf("%s: envelope ID is empty", typ)
	}
	if e.Type != typ {
		t.Errorf("envelope Type %q, want %q", e.Type, typ)
	}
	if e.Attempt != 1 {
		t.Errorf("%s: envelope Attempt %d, want 1", typ, e.Attempt)
	}
}
