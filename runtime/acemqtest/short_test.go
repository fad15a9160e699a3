package acemqtest_test

import (
	"flag"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/acemqtest"
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

func ended(t *testing.T, f func(testing.TB)) (r *recordingTB) {
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

// Under go test -short every helper that needs the broker skips the test
// without dialling, even under CI=true: -short asks for the tests that
// need no broker.
func TestShortSkipsWithoutDialling(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
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
	t.Setenv("ACEMQ_TEST_URL", "amqp://guest:guest@"+ln.Addr().String()+"/")
	t.Setenv("ACEMQ_TEST_MGMT_URL", "http://"+ln.Addr().String())
	t.Setenv("CI", "true")
	was := flag.Lookup("test.short").Value.String()
	if err := flag.Set("test.short", "true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("test.short", was) })

	for name, f := range map[string]func(testing.TB){
		"Require":   func(tb testing.TB) { acemqtest.Require(tb) },
		"Dial":      func(tb testing.TB) { acemqtest.Dial(tb) },
		"Queue":     func(tb testing.TB) { acemqtest.Queue(tb, "short") },
		"VHost":     func(tb testing.TB) { acemqtest.VHost(tb) },
		"DialVHost": func(tb testing.TB) { acemqtest.DialVHost(tb) },
	} {
		r := ended(t, f)
		if !strings.Contains(r.skipped, "-short") || r.failed != "" {
			t.Errorf("-short, CI=true: %s skipped %q, failed %q; want a skip naming -short", name, r.skipped, r.failed)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Errorf("-short: %d connections to the broker's port; want none", n)
	}
}
