//go:build faults

package pgstore_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
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

const inboxChildOrigin = "inbox-sigkill-child"

// TestChildInbox is the consumer process of
// TestFaultInboxSIGKILL; it does nothing unless run by it. With
// ACEMQ_INBOX_CHILD_KILL_AT=n it SIGKILLs itself at its n-th Accept after
// the inbox committed and before the runtime acks (a middleware outside
// the inbox's). It prints "duplicate" for each delivery the inbox acked
// without the handler.
func TestChildInbox(t *testing.T) {
	schema, q := os.Getenv("ACEMQ_INBOX_CHILD_SCHEMA"), os.Getenv("ACEMQ_INBOX_CHILD_QUEUE")
	if schema == "" {
		t.Skip("run by TestFaultInboxSIGKILL")
	}
	killAt, _ := strconv.Atoi(os.Getenv("ACEMQ_INBOX_CHILD_KILL_AT"))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT)
	defer stop()
	pool := pgtest.Pool(t, schema)
	dupLog := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug}))
	in, err := pgstore.NewInbox(pool, pgstore.WithLogger(dupLog))
	if err != nil {
		t.Fatal(err)
	}
	c, err := runtime.Dial(ctx, acemqtest.URL(), runtime.WithOrigin(inboxChildOrigin),
		runtime.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))))
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int64
	killer := func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, m *runtime.Incoming) runtime.Ack {
			ack := next(ctx, m)
			if ack.Kind() == runtime.AckAccept && killAt > 0 && accepted.Add(1) == int64(killAt) {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL) // committed, not acked
				select {}
			}
			return ack
		}
	}
	policy := runtime.Fixed(10, 50*time.Millisecond)
	cs, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Retry: &policy, Routes: []runtime.Route{
		runtime.Handle(paymentType, pgstore.HandleTx(func(ctx context.Context, tx pgx.Tx, m *runtime.Message[payment]) runtime.Ack {
			if _, err := tx.Exec(ctx, `INSERT INTO effects (message_id) VALUES ($1)`, m.Envelope.ID); err != nil {
				return runtime.Retry(err)
			}
			return runtime.Accept()
		}))}}, runtime.WithMiddleware(killer, in.Middleware()), runtime.WithConcurrency(8), runtime.WithPrefetch(64))
	if err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = cs.Close(cctx)
	_ = c.Close(cctx)
}

// The consumer with the PostgreSQL inbox, handling 10,000 messages that
// each insert a row into a business table, SIGKILLed 20 times (every
// other time between the inbox's commit and the ack, the others at a
// random moment) while its connection is closed every 2 s; a last one,
// left alone, handles the rest. The business table ends with 10,000 rows
// exactly, one per message.
func TestFaultInboxSIGKILL(t *testing.T) {
	const n, kills = 10_000, 20
	pool, schema := pgtest.Schema(t, "inbox_sigkill")
	ctx := ctxFor(t, 10*time.Minute)
	if err := pgstore.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE effects (message_id text NOT NULL)`); err != nil { // no key: a repeat would show
		t.Fatal(err)
	}
	c := acemqtest.Dial(t)
	q := acemqtest.Queue(t, "inbox-sigkill")
	policy := runtime.Fixed(10, 50*time.Millisecond)
	if err := c.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q, Retry: policy, DeadLetter: true})); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 500 {
		batch := make([]payment, 500)
		for j := range batch {
			batch[j] = payment{ID: fmt.Sprintf("P-%05d", i+j)}
		}
		if err := runtime.PublishBatch(ctx, c, paymentType, "", batch, runtime.WithRoutingKey(q)); err != nil {
			t.Fatal(err)
		}
	}
	var duplicates atomic.Int64
	child := func(killAt int) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildInbox$", "-test.count=1")
		cmd.Env = append(os.Environ(), "ACEMQ_INBOX_CHILD_SCHEMA="+schema, "ACEMQ_INBOX_CHILD_QUEUE="+q,
			"ACEMQ_INBOX_CHILD_KILL_AT="+strconv.Itoa(killAt))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "duplicate acknowledged without its handler") {
					duplicates.Add(1)
				}
			}
		}()
		return cmd
	}
	stopCuts := make(chan struct{})
	var cuts atomic.Int64
	go func() { // the child's connection closed every 2 s
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopCuts:
				return
			case <-t.C:
				cuts.Add(int64(closeConnections(inboxChildOrigin)))
			}
		}
	}()
	defer close(stopCuts)
	effects := func() (rows, distinct int) {
		_ = pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT message_id) FROM effects`).Scan(&rows, &distinct)
		return
	}
	atCommit, killed := 0, 0
	for k := 0; k < kills; k++ {
		before, _ := effects()
		var cmd *exec.Cmd
		if k%2 == 0 {
			cmd = child(50 + rand.IntN(200)) // between commit and ack
			atCommit++
		} else {
			cmd = child(0)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if k%2 == 1 { // at a random moment once it handles messages
			for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if r, _ := effects(); r > before+20 {
					break
				}
			}
			time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
			_ = cmd.Process.Kill()
		}
		select {
		case <-done:
		case <-time.After(90 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("kill %d: the child did not die within 90s", k+1)
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("kill %d: the child ended without a SIGKILL: %v", k+1, cmd.ProcessState)
		}
		killed++
	}
	lastKill := time.Now()
	last := child(0)
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, d := effects(); d >= n && queueEmpty(t, q) {
			break
		}
	}
	recoverMS := time.Since(lastKill).Milliseconds()
	_ = last.Process.Signal(syscall.SIGINT)
	_ = last.Wait()
	rows, distinct := effects()
	deadLettered := queueDepth(t, q+".dlq") + queueDepth(t, q+".parked")
	line := fmt.Sprintf("fault=inbox-sigkill kills=%d at_commit=%d connection_cuts=%d messages=%d effects=%d duplicates_suppressed=%d lost=%d dead_lettered=%d recover_ms=%d",
		killed, atCommit, cuts.Load(), n, rows, duplicates.Load(), n-distinct, deadLettered, recoverMS)
	fmt.Println(line)
	if f := os.Getenv("ACEMQ_FAULTS_TABLE"); f != "" {
		if fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(fh, line)
			fh.Close()
		}
	}
	if rows != n || distinct != n || deadLettered != 0 || killed != kills {
		t.Errorf("want %d effects, one per message (rows %d, distinct %d), none dead-lettered (%d), %d kills (%d)", n, rows, distinct, deadLettered, kills, killed)
	}
	if duplicates.Load() == 0 {
		t.Error("no duplicate reached the inbox: the kills between commit and ack did not land")
	}
}

// closeConnections closes every connection whose client named itself
// name, through the management API; how many.
func closeConnections(name string) int {
	var conns []struct {
		Name             string `json:"name"`
		ClientProperties struct {
			ConnectionName string `json:"connection_name"`
		} `json:"client_properties"`
	}
	if err := acemqtest.Management(http.MethodGet, "connections?columns=name,client_properties", nil, &conns); err != nil {
		return 0
	}
	closed := 0
	for _, c := range conns {
		if c.ClientProperties.ConnectionName == name && acemqtest.Management(http.MethodDelete, "connections/"+url.PathEscape(c.Name), nil, nil) == nil {
			closed++
		}
	}
	return closed
}

func queueDepth(t *testing.T, q string) int {
	conn, err := amqp.Dial(acemqtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	qi, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
	if err != nil {
		return 0 // not declared: nothing in it
	}
	return qi.Messages
}

// queueEmpty: nothing ready or unacked in q (the management API's view).
func queueEmpty(t *testing.T, q string) bool {
	var info struct {
		Messages int `json:"messages"`
	}
	if err := acemqtest.Management(http.MethodGet, "queues/{vhost}/"+url.PathEscape(q), nil, &info); err != nil {
		return false
	}
	return info.Messages == 0
}
