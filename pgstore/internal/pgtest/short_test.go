package pgtest

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRequireUnderShortAndCI: under -short (with CI=true too) Require
// skips without connecting; under CI=true a database that does not answer
// fails the test. Each case runs in a child go test of this package.
func TestRequireUnderShortAndCI(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") != "" {
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
	listening := "postgres://postgres@" + ln.Addr().String() + "/test"
	closed := "postgres://postgres@127.0.0.1:1/test"
	cases := []struct {
		name, url, short, want string
	}{
		{"short+CI", listening, "-test.short", "--- SKIP"},
		{"CI, down", closed, "", "--- FAIL"},
		{"no CI, down", closed, "", "--- SKIP"},
	}
	for _, c := range cases {
		args := []string{"-test.run=^TestRequireUnderShortAndCI$", "-test.v"}
		if c.short != "" {
			args = append(args, c.short)
		}
		cmd := exec.Command(os.Args[0], args...)
		ci := "CI=true"
		if c.name == "no CI, down" {
			ci = "CI=false"
		}
		cmd.Env = append(os.Environ(), "PGTEST_CHILD=1", "ACEMQ_TEST_PG_URL="+c.url, ci)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), c.want) {
			t.Errorf("%s: want %q in:\n%s", c.name, c.want, out)
		}
	}
	if n := dialled.Load(); n != 0 {
		t.Errorf("under -short Require connected %d times; want 0", n)
	}
}
