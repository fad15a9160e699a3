package redistest

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRequireUnderShortAndCI: under -short (with CI=true too) Require
// skips without connecting; under CI=true a Redis that does not answer
// fails the test; without CI it skips. Each case runs in a child go test.
func TestRequireUnderShortAndCI(t *testing.T) {
	if os.Getenv("REDISTEST_CHILD") != "" {
		Require(t)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var dialled atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dialled.Add(1)
			c.Close()
		}
	}()
	cases := []struct{ name, addr, ci, short, want string }{
		{"short+CI", ln.Addr().String(), "CI=true", "-test.short", "--- SKIP"},
		{"CI, down", "127.0.0.1:1", "CI=true", "", "--- FAIL"},
		{"no CI, down", "127.0.0.1:1", "CI=false", "", "--- SKIP"},
	}
	for _, c := range cases {
		args := []string{"-test.run=^TestRequireUnderShortAndCI$", "-test.v"}
		if c.short != "" {
			args = append(args, c.short)
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "REDISTEST_CHILD=1", "ACEMQ_TEST_REDIS_ADDR="+c.addr, c.ci)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), c.want) {
			t.Errorf("%s: want %q in:\n%s", c.name, c.want, out)
		}
	}
	if n := dialled.Load(); n != 0 {
		t.Errorf("under -short Require connected %d times; want 0", n)
	}
}
