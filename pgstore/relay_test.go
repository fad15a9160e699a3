package pgstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/pgstore/internal/pgtest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Two relays on one outbox, rows of 40 keys written by 8 writers at once:
// every row published exactly once, each key's in the order its rows
// committed, and both relays did part of the work.
func TestTwoRelaysPublishEachRowOnceInKeyOrder(t *testing.T) {
	e := newOutboxEnv(t, "outbox_two")
	ctx := ctxFor(t, 120*time.Second)
	const keys, perKey, writers = 40, 25, 8
	r1 := e.relay(pgstore.WithRelayPoll(100*time.Millisecond), pgstore.WithRelayBatch(50))
	r2 := e.relay(pgstore.WithRelayPoll(100*time.Millisecond), pgstore.WithRelayBatch(50))
	_, _ = r1, r2
	e.waitFor(ctx, "each relay holding 8 shards", 30*time.Second, holders, 2)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Writer w owns keys w, w+writers, ...: one writer per key, so
			// its sequence is the commit order.
			for seq := range perKey {
				for k := w; k < keys; k += writers {
					key := fmt.Sprintf("key-%02d", k)
					e.write(ctx, event{Key: key, Seq: seq}, runtime.WithOrderingKey(key))
				}
			}
		}()
	}
	wg.Wait()
	ds := e.receive(keys*perKey, 60*time.Second)
	next := map[string]int{}
	ids := map[string]bool{}
	for _, d := range ds {
		ev := decodeEvent(t, d)
		if ids[d.MessageId] {
			t.Errorf("message %s (%+v) published twice", d.MessageId, ev)
		}
		ids[d.MessageId] = true
		if ev.Seq != next[ev.Key] {
			t.Errorf("%s: seq %d after %d: out of commit order", ev.Key, ev.Seq, next[ev.Key]-1)
		}
		next[ev.Key] = ev.Seq + 1
	}
	e.waitRows(ctx, 0, 30*time.Second)
	select {
	case d := <-e.got:
		t.Errorf("an extra message: %s %s", d.MessageId, d.Body)
	case <-time.After(500 * time.Millisecond):
	}
}

// holders is true when $1 sessions hold the table's 16 shard locks, 8
// each.
const holders = `SELECT count(*) = $1 AND min(n) = 16 / $1 AND max(n) = 16 / $1 FROM (
  SELECT pid, count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND objid < 16
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND classid = 'acemq_outbox'::regclass::oid
  GROUP BY pid) AS s`

// A row that commits after rows with higher ids were relayed is relayed
// too: the relay reads what is in the table, not past a high-water mark
// (Watermill#311's skipped rows).
func TestLateCommittedRowIsRelayed(t *testing.T) {
	e := newOutboxEnv(t, "outbox_late")
	ctx := ctxFor(t, 60*time.Second)
	e.relay(pgstore.WithRelayPoll(time.Hour))
	late, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Rollback(ctx)
	if err := pgstore.PublishTx(ctx, late, e.ob, eventType, "", event{Key: "late", Seq: 0}, runtime.WithRoutingKey(e.queue)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		e.write(ctx, event{Key: "early", Seq: i})
	}
	for _, d := range e.receive(3, 20*time.Second) {
		if ev := decodeEvent(t, d); ev.Key != "early" {
			t.Fatalf("relayed %+v before its transaction committed", ev)
		}
	}
	if err := late.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := decodeEvent(t, e.receive(1, 20*time.Second)[0]); ev.Key != "late" {
		t.Errorf("got %+v, want the late row", ev)
	}
	e.waitRows(ctx, 0, 20*time.Second)
}

// Two transactions writing rows of one key run one after the other from
// the write on (PublishTx's lock), so ids follow commit order and the
// relay publishes the first to commit first.
func TestRowsOfOneKeyFollowCommitOrder(t *testing.T) {
	e := newOutboxEnv(t, "outbox_commit_order")
	ctx := ctxFor(t, 60*time.Second)
	first, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback(ctx)
	if err := pgstore.PublishTx(ctx, first, e.ob, eventType, "", event{Key: "k", Seq: 0}, runtime.WithRoutingKey(e.queue), runtime.WithOrderingKey("k")); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		second <- pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT set_config('application_name', $1, true)", e.schema); err != nil {
				return err
			}
			return pgstore.PublishTx(ctx, tx, e.ob, eventType, "", event{Key: "k", Seq: 1}, runtime.WithRoutingKey(e.queue), runtime.WithOrderingKey("k"))
		})
	}()
	// The second writer waits on the key's lock, before taking its id.
	e.waitFor(ctx, "the second writer waiting on the key's lock", 20*time.Second,
		`SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'`, e.schema)
	// An unrelated key does not wait.
	e.write(ctx, event{Key: "other", Seq: 0}, runtime.WithOrderingKey("other"))
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	var ids []int64
	rows, _ := e.pool.Query(ctx, "SELECT id FROM acemq_outbox WHERE ordering_key = 'k' ORDER BY id")
	if ids, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil || len(ids) != 2 {
		t.Fatalf("rows of k: %v, %v", ids, err)
	}
	e.relay()
	var seqs []int
	for _, d := range e.receive(3, 20*time.Second) {
		if ev := decodeEvent(t, d); ev.Key == "k" {
			seqs = append(seqs, ev.Seq)
		}
	}
	if len(seqs) != 2 || seqs[0] != 0 || seqs[1] != 1 {
		t.Errorf("k relayed as %v, want [0 1] (commit order)", seqs)
	}
}

// A row the broker refuses holds back the later rows of its key, not the
// other keys' rows; once it can be routed it goes, then the rest, in order.
func TestRefusedRowHoldsBackItsKeyOnly(t *testing.T) {
	e := newOutboxEnv(t, "outbox_refused")
	ctx := ctxFor(t, 60*time.Second)
	blocked := e.queue + ".later"
	e.writeTo(ctx, blocked, event{Key: "k", Seq: 0}, runtime.WithOrderingKey("k"))
	e.writeTo(ctx, e.queue, event{Key: "k", Seq: 1}, runtime.WithOrderingKey("k"))
	e.writeTo(ctx, e.queue, event{Key: "free", Seq: 0}, runtime.WithOrderingKey("free"))
	// A poll of an hour: only the refused row's own retry time wakes the
	// relay for it.
	e.relay(pgstore.WithRelayBackoff(200*time.Millisecond, 200*time.Millisecond), pgstore.WithRelayPoll(time.Hour))
	if ev := decodeEvent(t, e.receive(1, 20*time.Second)[0]); ev.Key != "free" {
		t.Fatalf("got %+v first, want the other key's row", ev)
	}
	e.waitFor(ctx, "the refusal recorded", 20*time.Second,
		`SELECT attempts > 0 AND last_error LIKE '%unroutable%' FROM acemq_outbox WHERE routing_key = $1`, blocked)
	if n := e.rows(ctx); n != 2 {
		t.Fatalf("rows: %d, want 2 (the refused row and the one behind it)", n)
	}
	// Make the refused row routable.
	ds := e.openRoute(blocked)
	select {
	case d := <-ds:
		if ev := decodeEvent(t, d); ev.Seq != 0 {
			t.Errorf("got %+v on %s, want k's seq 0", ev, blocked)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the refused row was not relayed once routable")
	}
	if ev := decodeEvent(t, e.receive(1, 20*time.Second)[0]); ev.Key != "k" || ev.Seq != 1 {
		t.Errorf("got %+v, want k's seq 1 after seq 0", ev)
	}
	e.waitRows(ctx, 0, 20*time.Second)
}

// The batch read ahead while a batch's confirms are outstanding does not
// overtake a row of that batch the broker refuses: with batches of two,
// k's seq 1 is read ahead while seq 0 is still in flight, and must wait
// behind it, while the other key's rows go on.
func TestReadAheadWaitsBehindARefusedRow(t *testing.T) {
	e := newOutboxEnv(t, "outbox_ahead")
	ctx := ctxFor(t, 60*time.Second)
	blocked := e.queue + ".later"
	e.writeTo(ctx, blocked, event{Key: "k", Seq: 0}, runtime.WithOrderingKey("k"))
	for seq := range 3 {
		e.writeTo(ctx, e.queue, event{Key: "free", Seq: seq}, runtime.WithOrderingKey("free"))
		if seq < 2 {
			e.writeTo(ctx, e.queue, event{Key: "k", Seq: seq + 1}, runtime.WithOrderingKey("k"))
		}
	}
	e.relay(pgstore.WithRelayBatch(2), pgstore.WithRelayBackoff(300*time.Millisecond, 300*time.Millisecond), pgstore.WithRelayPoll(time.Hour))
	for seq, d := range e.receive(3, 20*time.Second) {
		if ev := decodeEvent(t, d); ev.Key != "free" || ev.Seq != seq {
			t.Fatalf("got %+v, want free's seq %d (k's rows wait behind its refused seq 0)", ev, seq)
		}
	}
	e.waitRows(ctx, 3, 20*time.Second) // k's refused row and the two behind it
	ds := e.openRoute(blocked)
	select {
	case d := <-ds:
		if ev := decodeEvent(t, d); ev.Key != "k" || ev.Seq != 0 {
			t.Errorf("got %+v on %s, want k's seq 0", ev, blocked)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the refused row was not relayed once routable")
	}
	for i, d := range e.receive(2, 20*time.Second) {
		if ev := decodeEvent(t, d); ev.Key != "k" || ev.Seq != i+1 {
			t.Errorf("got %+v, want k's seq %d", ev, i+1)
		}
	}
	e.waitRows(ctx, 0, 20*time.Second)
}

// queryCounter is a pgx tracer counting the queries sent.
type queryCounter struct{ n atomic.Int64 }

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	q.n.Add(1)
	return ctx
}
func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// countedPool is a pool on e's schema whose connections (and the relay's,
// dialled from its config) count their queries.
func countedPool(t *testing.T, e *outboxEnv) (*pgxpool.Pool, *queryCounter) {
	cfg, err := pgxpool.ParseConfig(pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	qc := &queryCounter{}
	cfg.ConnConfig.RuntimeParams["search_path"] = e.schema
	cfg.ConnConfig.Tracer = qc
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, qc
}

// An idle relay sends fewer than one query a second (the default poll:
// a look at the relays and one at the table every 5 s).
func TestIdleRelaySendsUnderOneQueryASecond(t *testing.T) {
	e := newOutboxEnv(t, "outbox_idle")
	ctx := ctxFor(t, 90*time.Second)
	pool, qc := countedPool(t, e)
	r := pgstore.NewRelay(e.ob, pool, pgstore.WithRelayLogger(quiet()))
	e.run(r)
	// Started (connect, LISTEN, the member lock, the shards, a first
	// look) once it holds every shard.
	e.waitFor(ctx, "the relay holding the 16 shards", 20*time.Second, holders, 1)
	time.Sleep(time.Second)
	from, start := qc.n.Load(), time.Now()
	time.Sleep(12 * time.Second)
	queries, took := qc.n.Load()-from, time.Since(start)
	rate := float64(queries) / took.Seconds()
	t.Logf("idle relay: %d queries in %v: %.2f queries/s", queries, took.Round(time.Millisecond), rate)
	if rate >= 1 {
		t.Errorf("idle relay: %.2f queries/s, want < 1", rate)
	}
}

// A row written wakes an idle relay at once through LISTEN/NOTIFY: with a
// poll of an hour, a row written once the relay is waiting still goes out.
func TestNotifyWakesAnIdleRelay(t *testing.T) {
	e := newOutboxEnv(t, "outbox_notify")
	ctx := ctxFor(t, 60*time.Second)
	pool, qc := countedPool(t, e)
	e.run(pgstore.NewRelay(e.ob, pool, pgstore.WithRelayLogger(quiet()), pgstore.WithRelayPoll(time.Hour)))
	e.waitFor(ctx, "the relay holding the 16 shards", 20*time.Second, holders, 1)
	// Waiting: no query for half a second.
	for last := int64(-1); ; time.Sleep(500 * time.Millisecond) {
		n := qc.n.Load()
		if n == last {
			break
		}
		last = n
	}
	for i := range 3 {
		e.write(ctx, event{Key: "wake", Seq: i})
		if ev := decodeEvent(t, e.receive(1, 20*time.Second)[0]); ev.Key != "wake" || ev.Seq != i {
			t.Errorf("got %+v, want wake %d", ev, i)
		}
	}
}
