package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
)

// The demo tells the tutorial's story: A-1 is attempted four times and
// given up on, A-2 is rejected on its first attempt, and the two dead
// letters carry those reasons; once the warehouse is back the replay moves
// // A-1 (reserved on attempt 1) and leaves A-2: "moved 1, skipped 1
// (drained)". The queue names are the manifest's, so the test runs in a
// virtual host of its own: another run of the demo on the same broker
// cannot take its messages.
func TestDemoPlaysTheScenario(t *testing.T) {
	url := acemqtest.VHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, url, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for line, n := range map[string]int{
		"A-1: attempt 1\n": 2, "A-1: attempt 2\n": 1, "A-1: attempt 3\n": 1, "A-1: attempt 4\n": 1,
		"A-2: attempt 1\n": 1, "dead letters: 2\n": 1,
		"moved 1, skipped 1 (drained)\n": 1, "A-1: reserved\n": 1,
	} {
		if strings.Count(got, line) != n {
			t.Errorf("output has %q %d times, want %d:\n%s", line, strings.Count(got, line), n, got)
		}
	}
	if strings.Contains(got, "A-2: attempt 2") || strings.Contains(got, "A-1: attempt 5") || strings.Contains(got, "A-2: reserved") {
		t.Errorf("an attempt the policy does not allow, or A-2 reserved:\n%s", got)
	}
	// The replay comes after the dead letters were read, and left A-2 where
	// it belongs. (Its line and the handler's may interleave either way.)
	if strings.Index(got, "dead letters: 2") > strings.Index(got, "moved 1") {
		t.Errorf("the replay is not the last step:\n%s", got)
	}
	conn, err := runtime.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if n, err := conn.MessageCount(ctx, "orders.new.dlq"); err != nil || n != 1 {
		t.Errorf("orders.new.dlq after the replay holds %d (%v), want A-2 alone", n, err)
	}
	for _, reason := range []string{
		"rejected by the handler: no customer id",
		"gave up after 4 attempts: the warehouse is not answering",
	} {
		if !regexp.MustCompile(`(?m)^  [0-9a-f-]{36}: ` + regexp.QuoteMeta(reason) + `$`).MatchString(got) {
			t.Errorf("no dead letter line with %q:\n%s", reason, got)
		}
	}
}
