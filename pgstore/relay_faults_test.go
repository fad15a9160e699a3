//go:build faults

package pgstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/pgstore/internal/pgtest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
)

// killAtConfirmed SIGKILLs its own process on the relay's n-th "acemq:
// outbox confirmed" line: the relay writes it once the broker confirmed
// a batch and before it deletes the batch's rows, the window where a
// crash publishes rows again (never loses one).
type killAtConfirmed struct {
	slog.Handler
	n, seen *atomic.Int64
}

func (k killAtConfirmed) Enabled(context.Context, slog.Level) bool { return true }
func (k killAtConfirmed) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "acemq: outbox confirmed" && k.seen.Add(1) == k.n.Load() {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal arrives
	}
	if r.Level < slog.LevelError {
		return nil
	}
	return k.Handler.Handle(ctx, r)
}
func (k killAtConfirmed) WithAttrs(as []slog.Attr) slog.Handler {
	return killAtConfirmed{k.Handler.WithAttrs(as), k.n, k.seen}
}
func (k killAtConfirmed) WithGroup(g string) slog.Handler {
	return killAtConfirmed{k.Handler.WithGroup(g), k.n, k.seen}
}

// TestChildRelay is the relay process of
// TestFaultRelaySIGKILLBetweenConfirmAndDelete; it does nothing unless run
// by it.
func TestChildRelay(t *testing.T) {
	schema := os.Getenv("ACEMQ_RELAY_CHILD_SCHEMA")
	if schema == "" {
		t.Skip("run by TestFaultRelaySIGKILLBetweenConfirmAndDelete")
	}
	killAt, _ := strconv.Atoi(os.Getenv("ACEMQ_RELAY_CHILD_KILL_AT"))
	n, seen := &atomic.Int64{}, &atomic.Int64{}
	n.Store(int64(killAt))
	log := slog.New(killAtConfirmed{slog.NewTextHandler(os.Stderr, nil), n, seen})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT)
	defer stop()
	c, err := runtime.Dial(ctx, acemqtest.URL(), runtime.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	ob, err := pgstore.NewOutbox(c)
	if err != nil {
		t.Fatal(err)
	}
	pool := pgtest.Pool(t, schema)
	if err := pgstore.NewRelay(ob, pool, pgstore.WithRelayBatch(50), pgstore.WithRelayLogger(log)).Run(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = c.Close(cctx)
}

// The relay process SIGKILLed 20 times between a batch's confirms and the
// delete of its rows; a last one, left alone, relays the rest. Every row
// is published at least once, each key's rows first arrive in commit
// order, and a consumer with the inbox applies each exactly once.
func TestFaultRelaySIGKILLBetweenConfirmAndDelete(t *testing.T) {
	const keys, perKey, kills = 40, 50, 20
	const n = keys * perKey
	pool, schema := pgtest.Schema(t, "relay_sigkill")
	ctx := ctxFor(t, 5*time.Minute)
	if err := pgstore.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE applied (message_id text, key text, seq int)`); err != nil {
		t.Fatal(err)
	}
	c := acemqtest.Dial(t)
	q := acemqtest.Queue(t, "relay-sigkill")
	if err := c.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q})); err != nil {
		t.Fatal(err)
	}
	ob, err := pgstore.NewOutbox(c)
	if err != nil {
		t.Fatal(err)
	}
	for seq := range perKey {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			for k := range keys {
				key := fmt.Sprintf("key-%02d", k)
				if err := pgstore.PublishTx(ctx, tx, ob, eventType, "", event{Key: key, Seq: seq},
					runtime.WithRoutingKey(q), runtime.WithOrderingKey(key)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	cons := consumeRelayed(t, ctx, c, pool, q)

	child := func(killAt int) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildRelay$", "-test.count=1")
		cmd.Env = append(os.Environ(), "ACEMQ_RELAY_CHILD_SCHEMA="+schema, "ACEMQ_RELAY_CHILD_KILL_AT="+strconv.Itoa(killAt))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	killed := 0
	var lastKill time.Time
	for range kills {
		// Each child deletes its first batch and dies at the second's
		// confirms: progress, and a batch published twice, per kill.
		cmd := child(2)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatal("a relay child did not reach its second batch's confirms within 60s")
		}
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("a relay child ended without being SIGKILLed between confirm and delete: %v", cmd.ProcessState)
		}
		killed++
		lastKill = time.Now()
	}
	last := child(0)
	deadline := time.Now().Add(2 * time.Minute)
	var left, applied int
	for time.Now().Before(deadline) {
		_ = pool.QueryRow(ctx, "SELECT count(*) FROM acemq_outbox").Scan(&left)
		_ = pool.QueryRow(ctx, "SELECT count(*) FROM applied").Scan(&applied)
		if left == 0 && applied >= n {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	recoverMS := time.Since(lastKill).Milliseconds()
	_ = last.Process.Signal(syscall.SIGINT)
	_ = last.Wait()
	// Let the consumer take what is still in flight, then count.
	cons.settle(t, q)
	r := cons.result(t, ctx, pool)
	line := fmt.Sprintf("fault=relay-sigkill kills=%d rows=%d published=%d duplicates=%d effects=%d duplicates_suppressed=%d lost=%d out_of_order=%d recover_ms=%d",
		killed, n, r.deliveries, r.deliveries-r.distinct, r.effects, r.suppressed, n-r.distinct, r.outOfOrder, recoverMS)
	fmt.Println(line)
	if f := os.Getenv("ACEMQ_FAULTS_TABLE"); f != "" {
		if fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(fh, line)
			fh.Close()
		}
	}
	if left != 0 || r.distinct != n || r.effects != n || r.effectIDs != n || r.outOfOrder != 0 || killed != kills {
		t.Errorf("want every row published (rows left %d, distinct %d of %d), applied once (effects %d, distinct ids %d), in key order (out of order %d), %d kills (%d)",
			left, r.distinct, n, r.effects, r.effectIDs, r.outOfOrder, kills, killed)
	}
	if r.deliveries == r.distinct {
		t.Errorf("no row was published twice: the kills did not land between a confirm and its delete")
	}
}

// relayedConsumer handles the queue with the inbox, applying each message
// into the table applied, and records every delivery in order.
type relayedConsumer struct {
	mu         sync.Mutex
	seen       map[string]int // deliveries per message id
	firstNext  map[string]int // per key, the seq whose first delivery is due
	outOfOrder int
	deliveries int
	inbox      *pgstore.Inbox
	cs         *runtime.Consumer
}

type consumeResult struct {
	deliveries, distinct, effects, effectIDs, suppressed, outOfOrder int
}

func consumeRelayed(t *testing.T, ctx context.Context, c *runtime.Connection, pool pgstore.DB, q string) *relayedConsumer {
	in, err := pgstore.NewInbox(pool)
	if err != nil {
		t.Fatal(err)
	}
	ic := &relayedConsumer{seen: map[string]int{}, firstNext: map[string]int{}, inbox: in}
	h := func(ctx context.Context, m *runtime.Message[event]) runtime.Ack {
		ic.record(m.Envelope.ID, m.Payload)
		return in.Process(ctx, "relay-sigkill", m.Envelope.ID, func(ctx context.Context, tx pgx.Tx) runtime.Ack {
			if _, err := tx.Exec(ctx, `INSERT INTO applied VALUES ($1, $2, $3)`, m.Envelope.ID, m.Payload.Key, m.Payload.Seq); err != nil {
				return runtime.Retry(err)
			}
			return runtime.Accept()
		})
	}
	ic.cs, err = runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.Handle(eventType, h)}},
		runtime.WithConcurrency(1), runtime.WithPrefetch(50))
	if err != nil {
		t.Fatal(err)
	}
	return ic
}

// record counts a delivery and checks its key's order: the first
// delivery of each seq comes in seq order (a repeat of an earlier one is
// a duplicate, never out of order).
func (ic *relayedConsumer) record(id string, ev event) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	ic.deliveries++
	ic.seen[id]++
	if ic.seen[id] > 1 {
		return
	}
	if ev.Seq != ic.firstNext[ev.Key] {
		ic.outOfOrder++
	}
	ic.firstNext[ev.Key] = ev.Seq + 1
}

// settle waits until the queue is empty and the consumer idle.
func (ic *relayedConsumer) settle(t *testing.T, q string) {
	conn, err := amqp.Dial(acemqtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for stable := 0; stable < 3 && time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		qi, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		ic.mu.Lock()
		before := ic.deliveries
		ic.mu.Unlock()
		time.Sleep(200 * time.Millisecond)
		ic.mu.Lock()
		after := ic.deliveries
		ic.mu.Unlock()
		if qi.Messages == 0 && before == after {
			stable++
		} else {
			stable = 0
		}
	}
}

func (ic *relayedConsumer) result(t *testing.T, ctx context.Context, pool pgstore.DB) consumeResult {
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = ic.cs.Close(cctx)
	var r consumeResult
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := tx.QueryRow(ctx, `SELECT count(*), count(DISTINCT message_id) FROM applied`).Scan(&r.effects, &r.effectIDs); err != nil {
		t.Fatal(err)
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	r.deliveries, r.distinct, r.outOfOrder = ic.deliveries, len(ic.seen), ic.outOfOrder
	r.suppressed = int(ic.inbox.Stats().Duplicates)
	return r
}
