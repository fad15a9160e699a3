//go:generate go tool acemq-gen -f acemq.yaml

// Command orders plays the reference tutorial's "all together" scenario
// against a real RabbitMQ, through the code acemq-gen generated from
// acemq.yaml: two orders are published; A-1 is retried while the warehouse
// is down until its attempts run out and it is dead-lettered, A-2 has no
// customer id and is rejected at once; the dead letters are read with Pull
// and put back; then the warehouse comes back and conn.Replay moves the
// dead letters it caused to orders.new, where A-1 is reserved on attempt 1:
// "moved 1, skipped 1 (drained)". A-2 stays on orders.new.dlq.
//
//	make demo   # or: go run ./examples/orders
//
// The broker is ACEMQ_URL, else ACEMQ_TEST_URL, else
// amqp://guest:guest@localhost:5672/. The runtime's metrics are served to
// Prometheus at http://127.0.0.1:9464/metrics (ORDERS_METRICS_ADDR) while
// the scenario plays; with -serve the program keeps serving them after it,
// until interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

func main() {
	serve := flag.Bool("serve", false, "keep serving /metrics after the scenario, until interrupted")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := play(ctx, *serve); err != nil {
		fmt.Fprintln(os.Stderr, "orders:", err)
		os.Exit(1)
	}
}

// play serves the metrics and runs the scenario.
func play(ctx context.Context, serve bool) error {
	mp, h, err := newMetrics()
	if err != nil {
		return err
	}
	defer mp.Shutdown(context.Background())
	addr := os.Getenv("ORDERS_METRICS_ADDR")
	if addr == "" {
		addr = "127.0.0.1:9464"
	}
	if ln, err := net.Listen("tcp", addr); err != nil {
		// Another program holds the port: play the scenario anyway.
		fmt.Fprintf(os.Stderr, "orders: metrics not served: %v\n", err)
	} else {
		srv := serveMetrics(ln, h)
		defer srv.Close()
		fmt.Printf("metrics: http://%s/metrics\n", ln.Addr())
	}
	if err := run(ctx, brokerURL(), os.Stdout, runtime.WithMeterProvider(mp)); err != nil {
		return err
	}
	if serve {
		stop, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
		defer cancel()
		<-stop.Done()
	}
	return nil
}

func brokerURL() string {
	for _, env := range []string{"ACEMQ_URL", "ACEMQ_TEST_URL"} {
		if u := os.Getenv(env); u != "" {
			return u
		}
	}
	return "amqp://guest:guest@localhost:5672/"
}

// run plays the scenario, printing the story to out.
func run(ctx context.Context, url string, w io.Writer, opts ...runtime.DialOption) error {
	out := &lockedWriter{w: w}
	conn, err := runtime.Dial(ctx, url, append([]runtime.DialOption{runtime.WithOrigin("warehouse@laptop")}, opts...)...)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := conn.Declare(ctx, Topology()); err != nil {
		return err
	}
	dlq := wire.DeadLetterQueue("orders.new")
	if n, err := drain(ctx, conn, dlq); err != nil {
		return err
	} else if n > 0 {
		fmt.Fprintf(out, "(cleared %d dead letters an earlier run left on %s)\n", n, dlq)
	}

	wh := &warehouse{out: out, down: true}
	consumer, err := ConsumeOrdersNew(ctx, conn, wh)
	if err != nil {
		return err
	}
	defer consumer.Close(context.Background())

	customer := "C-9"
	orders := []OrderPlaced{{OrderID: "A-1", CustomerID: &customer}, {OrderID: "A-2"}} // no customer
	if err := NewOrdersPublisher(conn).PublishOrderPlacedBatch(ctx, orders); err != nil {
		return err
	}

	n, err := waitFor(ctx, conn, dlq, 2, 30*time.Second)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "dead letters: %d\n", n)
	if err := showDeadLetters(ctx, conn, dlq, out); err != nil {
		return err
	}

	// The warehouse is back: put back what it failed, and only that. A-2
	// would only be rejected again (it will not acquire a customer id).
	wh.setDown(false)
	res, err := conn.Replay(ctx, dlq, runtime.ReplayOptions{
		Filter: func(e runtime.Envelope, _ map[string]any, _ []byte) bool {
			return strings.Contains(e.Error, "warehouse")
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, res)
	return wh.waitReserved(ctx, "A-1", 30*time.Second)
}

// warehouse is the service's handler: it prints each attempt, rejects an
// order without a customer, and retries while the warehouse is down.
type warehouse struct {
	out io.Writer
	mu  sync.Mutex
	// down is true until the demo brings the warehouse back, before it
	// replays the dead letters.
	down     bool
	reserved map[string]bool
}

func (wh *warehouse) setDown(down bool) {
	wh.mu.Lock()
	wh.down = down
	wh.mu.Unlock()
}

// waitReserved waits until the order id was reserved.
func (wh *warehouse) waitReserved(ctx context.Context, id string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		wh.mu.Lock()
		done := wh.reserved[id]
		wh.mu.Unlock()
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s was not reserved within %s of the replay", id, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (wh *warehouse) HandleOrderPlaced(_ context.Context, m *runtime.Message[OrderPlaced]) runtime.Ack {
	id := m.Payload.OrderID
	fmt.Fprintf(wh.out, "%s: attempt %d\n", id, m.Envelope.Attempt)
	if m.Payload.CustomerID == nil {
		return runtime.Reject(errors.New("no customer id"))
	}
	wh.mu.Lock()
	down := wh.down
	wh.mu.Unlock()
	if down {
		return runtime.Retry(errors.New("the warehouse is not answering"))
	}
	fmt.Fprintf(wh.out, "%s: reserved\n", id)
	wh.mu.Lock()
	if wh.reserved == nil {
		wh.reserved = map[string]bool{}
	}
	wh.reserved[id] = true
	wh.mu.Unlock()
	return runtime.Accept()
}

// showDeadLetters pulls every dead letter first, prints each with its
// reason, then puts them all back: a delivery nacked at once would be the
// next one pulled, for ever.
func showDeadLetters(ctx context.Context, conn *runtime.Connection, dlq string, out io.Writer) error {
	var held []*runtime.Delivery
	for {
		d, err := conn.Pull(ctx, dlq)
		if err != nil {
			return err
		}
		if d == nil {
			break
		}
		held = append(held, d)
	}
	for _, d := range held {
		fmt.Fprintf(out, "  %s: %s\n", d.Envelope.ID, d.Envelope.Error)
	}
	for _, d := range held {
		if err := d.Nack(ctx, true); err != nil {
			return err
		}
	}
	return nil
}

// waitFor polls queue until it holds want messages, or fails after limit.
func waitFor(ctx context.Context, conn *runtime.Connection, queue string, want int, limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for {
		n, err := conn.MessageCount(ctx, queue)
		if err != nil || n >= want {
			return n, err
		}
		if time.Now().After(deadline) {
			return n, fmt.Errorf("%s holds %d messages after %s, want %d", queue, n, limit, want)
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// drain acks away what queue holds.
func drain(ctx context.Context, conn *runtime.Connection, queue string) (int, error) {
	n := 0
	for {
		d, err := conn.Pull(ctx, queue)
		if err != nil || d == nil {
			return n, err
		}
		if err := d.Ack(ctx); err != nil {
			return n, err
		}
		n++
	}
}

// lockedWriter lets the handler and the main flow print without mixing
// their lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
