package brokertest

import (
	"flag"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recordingTB stands in for a test: Skip and Fatal record what they were
// told and unwind (as the real ones do with runtime.Goexit).
type recordingTB struct {
	testing.TB
	skipped, failed string
}

type unwound struct{}

func (r *recordingTB) Helper()                   {}
func (r *recordingTB) Skip(args ...any)          { r.skipped = fmt.Sprint(args...); panic(unwound{}) }
func (r *recordingTB) Skipf(f string, a ...any)  { r.skipped = fmt.Sprintf(f, a...); panic(unwound{}) }
func (r *recordingTB) Fatalf(f string, a ...any) { r.failed = fmt.Sprintf(f, a...); panic(unwound{}) }

// run calls f with a recordingTB and says how it ended.
func run(t *testing.T, f func(testing.TB)) (r *recordingTB) {
	t.Helper()
	r = &recordingTB{TB: t}
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(unwound); !ok {
				panic(p)
			}
		}
	}()
	f(r)
	return r
}

// setShort sets -short for the rest of the test.
func setShort(t *testing.T, on bool) {
	t.Helper()
	was := flag.Lookup("test.short").Value.String()
	if err := flag.Set("test.short", fmt.Sprint(on)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("test.short", was) })
}

// listener is a port that counts the connections made to it.
func listener(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), accepted
}

// How -short and CI=true combine (docs/development.md): -short skips a
// broker test without dialling, CI=true or not; without -short a broker
// that answers is used, and one that does not fails under CI=true.
func TestRequireUnderShortAndCI(t *testing.T) {
	addr, accepted := listener(t)
	t.Setenv("ACEMQ_TEST_URL", "amqp://guest:guest@"+addr+"/")
	t.Setenv("CI", "true")

	setShort(t, true)
	for name, f := range map[string]func(testing.TB){
		"Require": func(tb testing.TB) { Require(tb) },
		"Queue":   func(tb testing.TB) { Queue(tb, "short") },
		"Raw":     func(tb testing.TB) { Raw(tb) },
	} {
		r := run(t, f)
		if !strings.Contains(r.skipped, "-short") || r.failed != "" {
			t.Errorf("-short, CI=true: %s skipped %q, failed %q; want a skip naming -short", name, r.skipped, r.failed)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Errorf("-short: %d connections to the broker's port; want none", n)
	}

	setShort(t, false)
	if r := run(t, func(tb testing.TB) { Require(tb) }); r.skipped != "" || r.failed != "" {
		t.Errorf("CI=true, broker answers: skipped %q, failed %q; want it used", r.skipped, r.failed)
	}
	deadline := time.Now().Add(5 * time.Second)
	for accepted.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if accepted.Load() == 0 {
		t.Error("without -short Require did not dial the broker")
	}

	// Nothing answers on port 1.
	t.Setenv("ACEMQ_TEST_URL", "amqp://guest:guest@127.0.0.1:1/")
	if r := run(t, func(tb testing.TB) { Require(tb) }); !strings.Contains(r.failed, "CI=true") {
		t.Errorf("CI=true, no broker: skipped %q, failed %q; want a failure", r.skipped, r.failed)
	}
	t.Setenv("CI", "")
	if r := run(t, func(tb testing.TB) { Require(tb) }); r.skipped == "" || r.failed != "" {
		t.Errorf("no CI, no broker: skipped %q, failed %q; want a skip", r.skipped, r.failed)
	}
}
