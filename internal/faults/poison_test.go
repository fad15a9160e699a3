//go:build faults

package faults

import (
	"context"
	"github.com/acemq/acemq-go/runtime/wire"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

const poisonLimit = 3

// TestChildPoison is the consumer process of TestPoisonMessageIsParked: it
// dies (SIGKILL) on the message "poison" and accepts the rest.
func TestChildPoison(t *testing.T) {
	q := os.Getenv("ACEMQ_FAULTS_POISON_QUEUE")
	if q == "" {
		t.Skip("run by TestPoisonMessageIsParked")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT)
	defer stop()
	c, err := runtime.Dial(ctx, URL(), runtime.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 4}))))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("ACEMQ_FAULTS_POISON_DECLARE") != "" {
		// As a service does: its Connection declares the topology, so it
		// knows the queue is quorum and trusts the broker's count.
		if err := c.Declare(ctx, runtime.NewTopology().Queue(poisonQueue(q, runtime.Quorum))); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(text, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
			if m.Payload == "poison" {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
			return runtime.Accept()
		}),
	}}, runtime.WithRedeliveryLimit(poisonLimit), runtime.WithPrefetch(1))
	if err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = cs.Close(cctx)
	_ = c.Close(cctx)
}

// A poison message that kills the consumer process each time is parked
// with a reason after the redelivery limit, instead of being redelivered
// for ever (a classic queue has no limit of its own), on every broker (the
// test runs on the fault node, and against RabbitMQ 4.0 and 4.3 in their
// lanes: make test-rmq4, make test-rmq43). The count is the runtime's
// stamp (x-acemq-redeliveries) on a classic queue — also when the producer
// forged x-delivery-count: 0 there, which once kept the message from ever
// being parked — and on a quorum queue the consumer's Connection did not
// declare; on a quorum queue it declared, the broker's x-delivery-count (a
// connection that dies counts on every RabbitMQ, 4.3 included; the
// queue's own delivery limit, 50, is far above).
func TestPoisonMessageIsParked(t *testing.T) {
	t.Run("classic", func(t *testing.T) { testPoison(t, runtime.Classic, false, nil) })
	t.Run("classic-forged", func(t *testing.T) {
		testPoison(t, runtime.Classic, false, map[string]any{"x-delivery-count": int64(0)})
	})
	t.Run("quorum", func(t *testing.T) { testPoison(t, runtime.Quorum, false, nil) })
	t.Run("quorum-declared", func(t *testing.T) { testPoison(t, runtime.Quorum, true, nil) })
}

func poisonQueue(q string, typ runtime.QueueType) runtime.Queue {
	return runtime.Queue{Name: q, Type: typ, DeadLetter: typ == runtime.Quorum}
}

func testPoison(t *testing.T, typ runtime.QueueType, declare bool, headers map[string]any) {
	q := queue(t, "poison-"+string(typ), func(tp *runtime.Topology, q string) {
		tp.Queue(poisonQueue(q, typ))
	})
	leakCheck(t)
	pub := dialQuiet(t, URL())
	publishWith(t, pub, q, "poison", headers)
	publish(t, pub, q, "fine")
	kills := 0
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if n, _ := QueueDepth(wire.ParkedQueue(q)); n > 0 {
			break
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildPoison$", "-test.count=1")
		cmd.Env = append(os.Environ(), "ACEMQ_FAULTS_POISON_QUEUE="+q)
		if declare {
			cmd.Env = append(cmd.Env, "ACEMQ_FAULTS_POISON_DECLARE=1")
		}
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
			kills++
		case <-time.After(5 * time.Second):
			// Alive: it has parked the poison and handles the rest.
			_ = cmd.Process.Signal(syscall.SIGINT)
			<-done
		}
		if kills > poisonLimit+2 {
			t.Fatalf("the poison message killed the consumer %d times and is not parked", kills)
		}
	}
	if kills != poisonLimit+1 {
		t.Errorf("the consumer died %d times, want %d (the first delivery and %d redeliveries)", kills, poisonLimit+1, poisonLimit)
	}
	got := readParked(t, wire.ParkedQueue(q))
	if len(got) != 1 || got[0].body != "poison" {
		t.Fatalf("q.parked = %+v, want the poison message", got)
	}
	want := "could not be handled: redelivered 4 times without being settled"
	if !strings.HasPrefix(got[0].reason, want) {
		t.Errorf("x-acemq-error = %q, want it to start %q", got[0].reason, want)
	}
	if n, _ := QueueDepth(q); n != 0 {
		t.Errorf("%s still holds %d messages", q, n)
	}
	closeAll(t, nil, pub)
}

// publishWith publishes body to q with the application headers h.
func publishWith(t *testing.T, c *runtime.Connection, q, body string, h map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := runtime.Publish(ctx, c, text, "", body, runtime.WithRoutingKey(q), runtime.WithHeaders(h)); err != nil {
		t.Fatalf("publish %q: %v", body, err)
	}
}

type parkedMsg struct{ body, reason string }

func readParked(t *testing.T, queue string) []parkedMsg {
	t.Helper()
	_, ch := raw(t)
	var out []parkedMsg
	for {
		d, ok, err := ch.Get(queue, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		r, _ := d.Headers[wire.HeaderError].(string)
		out = append(out, parkedMsg{string(d.Body), r})
	}
}
