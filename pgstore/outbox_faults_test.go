//go:build faults

package pgstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/pgstore/internal/pgtest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	"github.com/jackc/pgx/v5"
)

// Hostile outbox rows (issue 36, items 1 to 4), one fault line each:
//
//	fault=<shape> published=N handled=N refused=N attempts=N held_behind=N lost=N duplicated=N handler_calls=N connection_losses=N left_in_outbox=N
//
// Each shape is one row of key h made hostile in the table (as a tool
// writing rows itself would, past PublishTx's check), a row of key h
// behind it, and 20 good rows of keys of their own, relayed on the
// connection the consuming side uses, while the application publishes 20
// more on it. published counts what the relay and the application got
// confirmed, handled the accepted messages (each once), refused the rows
// left refused in the outbox and attempts their tries, held_behind the
// key's rows waiting behind one, connection_losses the consumer's lost
// sessions. The last shape is a row PublishTx writes with binary header
// values (a signature not UTF-8, a NUL), which must be relayed byte for
// byte.

type outboxShape struct {
	name   string
	breaks string // the UPDATE of the hostile row ($1: its id); "" leaves it as written
	// headers the hostile row is written with.
	headers map[string]any
	// refused is whether the row must be refused (else relayed).
	refused bool
}

// entry is one AMQP field table entry: name, then a long string value.
func entry(name, value string) []byte {
	b := append([]byte{byte(len(name))}, name...)
	n := len(value)
	b = append(b, 'S', byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	return append(b, value...)
}

// lossCounter counts the consumer's lost sessions a connection logs.
type lossCounter struct {
	slog.Handler
	n *atomic.Int64
}

func (h lossCounter) Enabled(context.Context, slog.Level) bool { return true }

func (h lossCounter) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "acemq: consumer lost its channel") {
		h.n.Add(1)
	}
	return nil
}

func (h lossCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h lossCounter) WithGroup(string) slog.Handler      { return h }

func TestFaultOutboxHostileRows(t *testing.T) {
	longName := strings.Repeat("n", 256)
	for _, sh := range []outboxShape{
		{name: "outbox-overlong-routing-key", breaks: `UPDATE acemq_outbox SET routing_key = repeat('r', 256) WHERE id = $1`, refused: true},
		{name: "outbox-overlong-exchange", breaks: `UPDATE acemq_outbox SET exchange = repeat('e', 256) WHERE id = $1`, refused: true},
		{name: "outbox-overlong-header-name", breaks: fmt.Sprintf(`UPDATE acemq_outbox SET header_table = header_table || '\x%x'::bytea WHERE id = $1`, entry(longName, "v")), refused: true},
		{name: "outbox-header-over-frame-max", breaks: fmt.Sprintf(`UPDATE acemq_outbox SET header_table = header_table || '\x%x'::bytea WHERE id = $1`, entry("padding", strings.Repeat("p", 140_000))), refused: true},
		{name: "outbox-unreadable-headers", breaks: `UPDATE acemq_outbox SET header_table = header_table || '\x0501'::bytea WHERE id = $1`, refused: true},
		{name: "outbox-binary-headers", headers: map[string]any{"sig": "\xff\xfesig\x80", "nul": "a\x00b", "name\xff": []byte{0, 0xff}}},
	} {
		t.Run(sh.name, func(t *testing.T) { runOutboxShape(t, sh) })
	}
}

func runOutboxShape(t *testing.T, sh outboxShape) {
	const good = 20
	pool, _ := pgtest.Schema(t, "outbox_hostile")
	ctx := ctxFor(t, 3*time.Minute)
	if err := pgstore.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	losses := &atomic.Int64{}
	c, err := runtime.Dial(ctx, acemqtest.URL(), runtime.WithLogger(slog.New(lossCounter{n: losses})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	q := acemqtest.Queue(t, "outbox-hostile")
	if err := c.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q})); err != nil {
		t.Fatal(err)
	}
	ob, err := pgstore.NewOutbox(c)
	if err != nil {
		t.Fatal(err)
	}
	write := func(ev event, opts ...runtime.PublishOption) {
		t.Helper()
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			return pgstore.PublishTx(ctx, tx, ob, eventType, "", ev, append([]runtime.PublishOption{runtime.WithRoutingKey(q)}, opts...)...)
		})
		if err != nil {
			t.Fatalf("write %+v: %v", ev, err)
		}
	}
	write(event{Key: "h", Seq: 0}, runtime.WithOrderingKey("h"), runtime.WithHeaders(sh.headers))
	var hostile int64
	if err := pool.QueryRow(ctx, "SELECT max(id) FROM acemq_outbox").Scan(&hostile); err != nil {
		t.Fatal(err)
	}
	if sh.breaks != "" {
		if _, err := pool.Exec(ctx, sh.breaks, hostile); err != nil {
			t.Fatal(err)
		}
	}
	write(event{Key: "h", Seq: 1}, runtime.WithOrderingKey("h"))
	for i := range good {
		write(event{Key: fmt.Sprintf("g-%02d", i), Seq: 0}, runtime.WithOrderingKey(fmt.Sprintf("g-%02d", i)))
	}

	var mu sync.Mutex
	calls := map[string]int{}
	var binaryOK atomic.Bool
	h := func(ctx context.Context, m *runtime.Message[event]) runtime.Ack {
		mu.Lock()
		calls[fmt.Sprintf("%s/%d", m.Payload.Key, m.Payload.Seq)]++
		mu.Unlock()
		if m.Payload.Key == "h" && m.Payload.Seq == 0 && sh.headers != nil {
			binaryOK.Store(m.Headers["sig"] == "\xff\xfesig\x80" && m.Headers["nul"] == "a\x00b" && string(m.Headers["name\xff"].([]byte)) == "\x00\xff")
		}
		return runtime.Accept()
	}
	cs, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{runtime.Handle(eventType, h)}},
		runtime.WithoutDeclare())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(context.Background()) })
	rctx, stop := context.WithCancel(ctx)
	relayDone := make(chan struct{})
	go func() {
		defer close(relayDone)
		_ = pgstore.NewRelay(ob, pool, pgstore.WithRelayBackoff(200*time.Millisecond, time.Second),
			pgstore.WithRelayPoll(200*time.Millisecond), pgstore.WithRelayLogger(quiet())).Run(rctx)
	}()
	published := 0
	for i := range good {
		if err := runtime.Publish(ctx, c, eventType, "", event{Key: fmt.Sprintf("app-%02d", i), Seq: 0}, runtime.WithRoutingKey(q)); err != nil {
			t.Errorf("the application's publish %d on the relay's connection: %v", i, err)
			continue
		}
		published++
		time.Sleep(100 * time.Millisecond)
	}
	want := map[string]bool{}
	for i := range good {
		want[fmt.Sprintf("g-%02d/0", i)], want[fmt.Sprintf("app-%02d/0", i)] = true, true
	}
	if !sh.refused {
		want["h/0"], want["h/1"] = true, true
	}
	deadline := time.Now().Add(60 * time.Second)
	var attempts int
	for time.Now().Before(deadline) {
		_ = pool.QueryRow(ctx, "SELECT coalesce(max(attempts), 0) FROM acemq_outbox").Scan(&attempts)
		mu.Lock()
		done := 0
		for k := range want {
			if calls[k] > 0 {
				done++
			}
		}
		mu.Unlock()
		if done == len(want) && (!sh.refused || attempts >= 3) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // a duplicate would show
	stop()
	<-relayDone
	var left, refused, heldBehind int
	_ = pool.QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE attempts > 0), count(*) FILTER (WHERE attempts = 0 AND ordering_key = 'h') FROM acemq_outbox").Scan(&left, &refused, &heldBehind)
	mu.Lock()
	lost, dup, handled, handlerCalls := 0, 0, 0, 0
	for k := range want {
		if calls[k] == 0 {
			lost++
		}
	}
	for k, n := range calls {
		handlerCalls += n
		handled++
		if n > 1 {
			dup += n - 1
		}
		if !want[k] {
			t.Errorf("%s: handled %s, which must not have been published", sh.name, k)
		}
	}
	mu.Unlock()
	confirmed := published + (good + 2) - left
	line := fmt.Sprintf("fault=%s published=%d handled=%d refused=%d attempts=%d held_behind=%d lost=%d duplicated=%d handler_calls=%d connection_losses=%d left_in_outbox=%d",
		sh.name, confirmed, handled, refused, attempts, heldBehind, lost, dup, handlerCalls, losses.Load(), left)
	fmt.Println(line)
	if f := os.Getenv("ACEMQ_FAULTS_TABLE"); f != "" {
		if fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(fh, line)
			fh.Close()
		}
	}
	if lost != 0 || dup != 0 || losses.Load() != 0 {
		t.Errorf("%s: lost %d, duplicated %d, connection losses %d; want 0, 0, 0", sh.name, lost, dup, losses.Load())
	}
	if sh.refused && (refused != 1 || heldBehind != 1 || attempts < 2 || left != 2) {
		t.Errorf("%s: refused %d (attempts %d), held behind %d, left %d; want the row refused on its row, tried again, and its key's next row held behind it", sh.name, refused, attempts, heldBehind, left)
	}
	if !sh.refused && (left != 0 || !binaryOK.Load()) {
		t.Errorf("%s: left %d, headers byte for byte %v; want the row relayed with its headers as written", sh.name, left, binaryOK.Load())
	}
}
