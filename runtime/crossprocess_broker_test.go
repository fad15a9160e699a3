package runtime_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	"github.com/acemq/acemq-go/runtime/internal/confluenttest"
	"github.com/acemq/acemq-go/runtime/registry"
)

// buildAvroproc builds testdata/avroproc into a directory removed when the
// test ends.
func buildAvroproc(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "avroproc")
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", path, "./testdata/avroproc").CombinedOutput(); err != nil {
		t.Fatalf("build testdata/avroproc: %v\n%s", err, out)
	}
	return path
}

// proc starts the avroproc binary with args; wait returns its stdout.
func proc(t *testing.T, bin string, args ...string) (wait func() string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-url", brokertest.Require(t)}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return func() string {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("avroproc %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
			}
		case <-time.After(90 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("avroproc %s did not finish\n%s", strings.Join(args, " "), stderr.String())
		}
		return stdout.String()
	}
}

// Avro between two OS processes built from the same schemas: with nothing
// configured when both use the same schema, and through a shared directory
// registry when a v1 producer meets a v2 consumer.
func TestAvroBetweenTwoProcesses(t *testing.T) {
	t.Parallel()
	c := dial(t)
	bin := buildAvroproc(t)
	t.Run("same schema, nothing configured", func(t *testing.T) {
		q := brokertest.Queue(t, "xproc")
		declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
		consumer := proc(t, bin, "-role", "consume", "-queue", q, "-schema", "v1", "-n", "3")
		proc(t, bin, "-role", "publish", "-queue", q, "-schema", "v1", "-n", "3")()
		got := consumer()
		want := "{\"id\":\"A-1\"}\n{\"id\":\"A-2\"}\n{\"id\":\"A-3\"}\n"
		if got != want {
			t.Fatalf("the consumer process got\n%s\nwant\n%s", got, want)
		}
		if d := depth(t, runtime.ParkedQueue(q)); d != 0 {
			t.Fatalf("%s holds %d, want 0", runtime.ParkedQueue(q), d)
		}
	})
	t.Run("v1 producer, v2 consumer, directory registry", func(t *testing.T) {
		q := brokertest.Queue(t, "xproc12")
		declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
		dir := t.TempDir()
		consumer := proc(t, bin, "-role", "consume", "-queue", q, "-schema", "v2", "-registry", dir, "-n", "2")
		proc(t, bin, "-role", "publish", "-queue", q, "-schema", "v1", "-registry", dir, "-n", "2")()
		got := consumer()
		want := "{\"id\":\"A-1\",\"currency\":\"EUR\"}\n{\"id\":\"A-2\",\"currency\":\"EUR\"}\n"
		if got != want {
			t.Fatalf("the v2 consumer process got\n%s\nwant\n%s", got, want)
		}
		if _, err := os.Stat(filepath.Join(dir, registry.DirectoryIndexFile)); err != nil {
			t.Fatalf("the shared registry has no index: %v", err)
		}
	})
	t.Run("v1 producer, v2 consumer, HTTP registry", func(t *testing.T) {
		q := brokertest.Queue(t, "xproc12http")
		declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
		srv := confluenttest.Start(t)
		consumer := proc(t, bin, "-role", "consume", "-queue", q, "-schema", "v2", "-registry-url", srv.URL, "-n", "2")
		proc(t, bin, "-role", "publish", "-queue", q, "-schema", "v1", "-registry-url", srv.URL, "-n", "2")()
		got := consumer()
		want := "{\"id\":\"A-1\",\"currency\":\"EUR\"}\n{\"id\":\"A-2\",\"currency\":\"EUR\"}\n"
		if got != want {
			t.Fatalf("the v2 consumer process got\n%s\nwant\n%s", got, want)
		}
		// The publisher registered v1 once; the consumer looked it up once.
		if n := srv.Calls(); n != 2 {
			t.Fatalf("%d registry calls, want 2 (one registration, one lookup)", n)
		}
	})
	t.Run("v1 producer, v2 consumer, nothing shared", func(t *testing.T) {
		// What the default registry cannot do: the consumer has never seen
		// v1. The message is parked with a reason that says what to do,
		// and never decoded as something else.
		q := brokertest.Queue(t, "xprocnone")
		declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
		id, err := runtime.SchemaID(`{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"string"}]}`)
		if err != nil {
			t.Fatal(err)
		}
		ctx := ctxFor(t, 60*time.Second)
		cs, err := runtime.Consume(ctx, c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
			runtime.Handle(runtime.NewAvroType[outageOrderV2]("shop.order", "orders",
				`{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"string"},{"name":"currency","type":"string","default":"EUR"}]}`),
				func(context.Context, *runtime.Message[outageOrderV2]) runtime.Ack { return runtime.Accept() }),
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close(ctx)
		proc(t, bin, "-role", "publish", "-queue", q, "-schema", "v1", "-n", "1")()
		d := getOne(t, runtime.ParkedQueue(q), wait)
		want := "could not be decoded: look up the writer schema: schema id " + strconv.Itoa(id) + ": acemq: schema not found (the default registry knows only the schemas of this program: share a directory or HTTP registry between the publisher and the consumer)"
		if got := headerString(t, d, "x-acemq-error"); got != want {
			t.Fatalf("x-acemq-error:\n got %q\nwant %q", got, want)
		}
	})
}
