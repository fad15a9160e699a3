package consume

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// stagePath is the way of one accepted delivery through the engine's
// files, in order (doc.go), and the functions each stage runs in its file.
var stagePath = []struct {
	file  string
	funcs []string
}{
	{"session.go", []string{"run"}},
	{"receive.go", []string{"serve", "next", "takeOne", "taken", "take"}},
	{"decode.go", []string{"decodeAhead", "work", "process", "begin", "startSpan", "typeOpts", "consumed", "decode", "routeOf", "decodeInfo", "end"}},
	{"handle.go", []string{"handle", "handled", "answered", "timed"}},
	{"settle.go", []string{"carryOut", "settle", "accepted"}},
	{"ackbatch.go", []string{"ack", "flushAcks", "sentHook"}},
}

// TestStageFunctionsLiveInTheirStagesFile: every function the path runs
// is declared in its stage's file, so that the stacks below (which show
// only the calls under way) and the calls that returned before them
// visit the files in the same order.
func TestStageFunctionsLiveInTheirStagesFile(t *testing.T) {
	fset := token.NewFileSet()
	for _, st := range stagePath {
		f, err := parser.ParseFile(fset, st.file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var declared []string
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				declared = append(declared, fd.Name.Name)
			}
		}
		for _, fn := range st.funcs {
			if !slices.Contains(declared, fn) {
				t.Errorf("%s does not declare %s, a step of its stage", st.file, fn)
			}
		}
	}
}

// consumeFiles are the files of package consume on the calling
// goroutine's stack, outermost first.
func consumeFiles() []string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var files []string
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "/runtime/internal/consume.") && !strings.HasSuffix(f.File, "_test.go") {
			files = append(files, filepath.Base(f.File))
		}
		if !more {
			break
		}
	}
	slices.Reverse(files)
	return files
}

// TestOneDeliveryVisitsEachStageOnce follows an accepted delivery on the
// broker, with one worker (decoded ahead by the loop that receives it)
// and with two (each worker decodes its own): the stacks at its decode
// ahead, its handler and its ack, joined, go through the stages' files in
// order and enter each once.
func TestOneDeliveryVisitsEachStageOnce(t *testing.T) {
	brokertest.Require(t)
	conn, err := amqp.Dial(brokertest.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var want []string
	for _, st := range stagePath {
		want = append(want, st.file)
	}
	for _, workers := range []int{1, 2} {
		t.Run(map[int]string{1: "decoded-ahead", 2: "decoded-by-the-worker"}[workers], func(t *testing.T) {
			got := followOne(t, conn, workers)
			if workers > 1 {
				// The loop hands it on undecoded: its stack is not
				// recorded (no decode ahead), the receive stage is.
				got = append([]string{"session.go", "receive.go"}, got...)
			}
			if !slices.Equal(got, want) {
				t.Errorf("one delivery visits %v; want each stage's file once, in order: %v", got, want)
			}
		})
	}
}

// followOne consumes one accepted delivery with workers workers and
// returns the files it went through, consecutive repeats joined.
func followOne(t *testing.T, conn *amqp.Connection, workers int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q := brokertest.Queue(t, "stages")
	var mu sync.Mutex
	var ahead, handler, acked []string
	done := make(chan struct{})
	tc := newTestConn()
	tc.amqp = conn
	cfg := Defaults()
	cfg.Prefetch, cfg.Concurrency, cfg.NoDeclare = 1, workers, true // prefetch 1: each ack at once, on the worker
	cfg.DecodedAhead = func(string) { mu.Lock(); ahead = consumeFiles(); mu.Unlock() }
	cfg.AckSent = func(uint64, bool) {
		mu.Lock()
		defer mu.Unlock()
		if acked == nil {
			acked = consumeFiles()
			close(done)
		}
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if _, err := ch.QueueDeclare(q, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	typ := testTextType("acemq.stages.order")
	h := func(context.Context, *core.Message[string]) core.Ack {
		mu.Lock()
		handler = consumeFiles()
		mu.Unlock()
		return core.Accept()
	}
	cs, err := Start(ctx, ConsumerSpec{Queue: q, Routes: []core.Route{core.Handle(typ, h)}}, testConfig(cfg, tc))
	if err != nil {
		t.Fatal(err)
	}
	cs.Run()
	// Closed before the test returns (its run loop would otherwise
	// resubscribe for ever once the connection closes), and before the
	// queue's cleanup if a Fatal comes first.
	closeConsumer := func() { _ = cs.Close(context.Background()) }
	brokertest.CloseBeforeCleanup(t, closeConsumer)
	defer closeConsumer()
	if err := ch.PublishWithContext(ctx, "", q, false, false, amqp.Publishing{Type: typ.Name(), ContentType: wire.ContentTypeText, MessageId: "id-1", Body: []byte("order A-1")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the delivery was not acked within 30 s")
	}
	mu.Lock()
	defer mu.Unlock()
	if workers == 1 && ahead == nil {
		t.Fatal("with one worker the delivery was not decoded ahead")
	}
	if !isPrefix(handler, acked) {
		t.Fatalf("the handler's stack %v is not under the ack's %v: the settling did not follow the handler", handler, acked)
	}
	var path []string
	for _, f := range append(ahead, acked...) {
		if len(path) == 0 || path[len(path)-1] != f {
			path = append(path, f)
		}
	}
	return path
}

// isPrefix reports whether a's files up to the handle stage are b's.
func isPrefix(a, b []string) bool {
	i := slices.Index(a, "handle.go")
	return i >= 0 && len(b) > i && slices.Equal(a[:i+1], b[:i+1])
}
