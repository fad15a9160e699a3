//go:build faults

package faults

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.uber.org/goleak"
)

var text = runtime.NewTextType("acemq.faults.v1")

// leakCheck fails the test when goroutines started after it are still
// running at the end (after every Close).
func leakCheck(t *testing.T) {
	t.Helper()
	opts := []goleak.Option{goleak.IgnoreCurrent()}
	t.Cleanup(func() {
		// Give amqp091's reader and heartbeater goroutines a moment to see
		// their sockets closed.
		var err error
		for range 50 {
			if err = goleak.Find(opts...); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("goroutines left after Close: %v", err)
	})
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func quietLogger() *slog.Logger {
	if os.Getenv("ACEMQ_FAULTS_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 4}))
}

// dial connects to the fault node. The connection is closed at cleanup
// unless the test closed it.
func dial(t *testing.T, opts ...runtime.DialOption) *runtime.Connection {
	t.Helper()
	u := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts = append([]runtime.DialOption{runtime.WithLogger(quietLogger())}, opts...)
	c, err := runtime.Dial(ctx, u, opts...)
	if err != nil {
		t.Fatalf("runtime.Dial: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c
}

// raw opens a plain amqp091 connection to the fault node.
func raw(t *testing.T) (*amqp.Connection, *amqp.Channel) {
	t.Helper()
	conn, err := amqp.Dial(Require(t))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, ch
}

// queue declares a durable queue (and its dlq/parked by the consumer) and
// deletes them at the end.
func queue(t *testing.T, prefix string, top func(*runtime.Topology, string)) string {
	t.Helper()
	q := Name(prefix)
	c := dial(t)
	tp := runtime.NewTopology().Queue(runtime.Queue{Name: q})
	if top != nil {
		tp = runtime.NewTopology()
		top(tp, q)
	}
	if err := c.Declare(ctxFor(t, 20*time.Second), tp); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteQueues(q) })
	return q
}

func deleteQueues(q string) {
	conn, err := amqp.Dial(URL())
	if err != nil {
		return
	}
	defer conn.Close()
	var qs []struct {
		Name string `json:"name"`
	}
	_ = Mgmt("GET", "queues/%2F?columns=name", &qs)
	names := []string{q, q + ".dlq", q + ".parked"}
	for _, x := range qs {
		if len(x.Name) > len(q) && x.Name[:len(q)+1] == q+"." {
			names = append(names, x.Name)
		}
	}
	for _, n := range names {
		ch, err := conn.Channel()
		if err != nil {
			return
		}
		_, _ = ch.QueueDelete(n, false, false, false)
		ch.Close()
	}
}

// events collects what handlers saw, safe for concurrent use.
type events struct {
	mu   sync.Mutex
	list []event
	at   chan struct{}
}

type event struct {
	body        string
	attempt     int
	redelivered bool
	at          time.Time
}

func newEvents() *events { return &events{at: make(chan struct{}, 1)} }

func (e *events) add(m *runtime.Message[string]) {
	e.mu.Lock()
	e.list = append(e.list, event{m.Payload, m.Envelope.Attempt, m.Redelivered, time.Now()})
	e.mu.Unlock()
	select {
	case e.at <- struct{}{}:
	default:
	}
}

func (e *events) all() []event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]event(nil), e.list...)
}

// waitFor waits until cond holds for what was seen, or fails after d.
func (e *events) waitFor(t *testing.T, d time.Duration, what string, cond func([]event) bool) []event {
	t.Helper()
	deadline := time.After(d)
	for {
		all := e.all()
		if cond(all) {
			return all
		}
		select {
		case <-e.at:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("after %s: %s did not happen; seen %+v", d, what, all)
		}
	}
}

func count(evs []event, body string) int {
	n := 0
	for _, e := range evs {
		if e.body == body {
			n++
		}
	}
	return n
}

func isUnavailable(err error) bool { return errors.Is(err, runtime.ErrUnavailable) }
