//go:build faults

package faults

import (
	"bufio"
	"context"
	"errors"
	"github.com/acemq/acemq-go/runtime/wire"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The child's policy: every message fails its first attempt and waits 1s
// in the broker (rung q.retry.1s), so each retry is a copy published with a
// confirm, then an ack of the original.
var childPolicy = runtime.Fixed(3, time.Second).WithWaitInBrokerFrom(time.Second)

// killAtRetry is a slog handler that SIGKILLs its own process on the
// runtime's "acemq: retry" line for a broker wait: the runtime writes that
// line after the copy's confirm and before the original's ack, the window
// where a crash leaves a duplicate (never a loss).
type killAtRetry struct{ slog.Handler }

func (k killAtRetry) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "acemq: retry" {
		broker := false
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "wait" && a.Value.String() == "broker" {
				broker = true
			}
			return true
		})
		if broker {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal arrives
		}
	}
	if !k.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return k.Handler.Handle(ctx, r)
}

// Enabled lets every record reach Handle, which looks for the retry line.
func (k killAtRetry) Enabled(context.Context, slog.Level) bool { return true }

func (k killAtRetry) WithAttrs(as []slog.Attr) slog.Handler {
	return killAtRetry{k.Handler.WithAttrs(as)}
}
func (k killAtRetry) WithGroup(g string) slog.Handler { return killAtRetry{k.Handler.WithGroup(g)} }

// TestChildConsumer is the consumer process of TestFaultSIGKILLBetweenConfirmAndAck;
// it does nothing unless run by it.
func TestChildConsumer(t *testing.T) {
	q := os.Getenv("ACEMQ_FAULTS_CHILD_QUEUE")
	if q == "" {
		t.Skip("run by TestFaultSIGKILLBetweenConfirmAndAck")
	}
	out, err := os.OpenFile(os.Getenv("ACEMQ_FAULTS_CHILD_OUT"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var h slog.Handler = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 4})
	if os.Getenv("ACEMQ_FAULTS_CHILD_KILL") == "1" {
		h = killAtRetry{slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 4})}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT)
	defer stop()
	c, err := runtime.Dial(ctx, URL(), runtime.WithLogger(slog.New(h)))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(text, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
			if m.Envelope.Attempt == 1 {
				return runtime.Retry(errors.New("first attempt fails"))
			}
			if _, err := out.WriteString(m.Payload + "\n"); err != nil {
				return runtime.Retry(err)
			}
			return runtime.Accept()
		}),
	}}, runtime.WithRetry(childPolicy), runtime.WithConcurrency(1), runtime.WithPrefetch(10))
	if err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = cs.Close(cctx)
	_ = c.Close(cctx)
}

// The consumer process SIGKILLed 20 times between a retry's confirm and its
// ack; a last one, left alone, handles the rest. Nothing is lost.
func TestFaultSIGKILLBetweenConfirmAndAck(t *testing.T) {
	const n, kills = 300, 20
	q := queue(t, "sigkill", func(tp *runtime.Topology, q string) { tp.Queue(runtime.Queue{Name: q, Retry: childPolicy}) })
	leakCheck(t)
	pub := dialQuiet(t, URL())
	p := newProbe(t, "consumer-sigkill-between-confirm-and-ack", q)
	p.publish(pub, 0, n, 4, 0, time.Now().Add(time.Minute))
	outFile := filepath.Join(t.TempDir(), "handled")

	child := func(kill bool) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildConsumer$", "-test.count=1")
		cmd.Env = append(os.Environ(), "ACEMQ_FAULTS_CHILD_QUEUE="+q, "ACEMQ_FAULTS_CHILD_OUT="+outFile)
		if kill {
			cmd.Env = append(cmd.Env, "ACEMQ_FAULTS_CHILD_KILL=1")
		}
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	killed := 0
	var lastKill time.Time
	for range kills {
		cmd := child(true)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatal("a child did not reach a broker retry within 30s")
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			killed++
			lastKill = time.Now()
		} else {
			t.Fatalf("a child ended without being SIGKILLed at a retry: %v", cmd.ProcessState)
		}
	}
	last := child(false)
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		seen := readHandled(t, outFile)
		if p.recoverMS == 0 && len(seen) > 0 {
			if st, err := os.Stat(outFile); err == nil && st.ModTime().After(lastKill) {
				p.recoverMS = time.Since(lastKill).Milliseconds()
			}
		}
		if len(seen) >= n {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = last.Process.Signal(syscall.SIGINT)
	_ = last.Wait()
	for seq, k := range readHandled(t, outFile) {
		p.handled[seq] = k
	}
	if killed != kills {
		t.Errorf("%d kills, want %d", killed, kills)
	}
	// Each kill leaves at most one duplicate per delivery the child had
	// unacked (prefetch 10 + the default hold budget 10 + the default ack
	// slack 10): a copy confirmed in the rung and its original, unacked,
	// redelivered, or a delivery settled behind a copy in flight and
	// waiting in the slack for its confirm. The worker does not wait for a
	// copy's confirm, so when the first confirm's log line kills the
	// child, the copies of the deliveries behind it may be in the rung too.
	p.report(nil, kills*(10+10+10))
	closeAll(t, nil, pub)
	waitEmpty(t, wire.RungQueue(q, time.Second))
}

func readHandled(t *testing.T, path string) map[int]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if seq, err := strconv.Atoi(sc.Text()); err == nil {
			out[seq]++
		}
	}
	return out
}

func waitEmpty(t *testing.T, queue string) {
	t.Helper()
	conn, err := amqp.Dial(URL())
	if err != nil {
		return
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return
	}
	if q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil); err == nil && q.Messages > 0 {
		t.Errorf("%s still holds %d messages", queue, q.Messages)
	}
}
