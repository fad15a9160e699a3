package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/brokertest"
)

// The demo tells the tutorial's story: A-1 is attempted four times and
// given up on, A-2 is rejected on its first attempt, and the two dead
// letters carry those reasons. The queue names are the manifest's, so the
// test deletes them before and after.
func TestDemoPlaysTheScenario(t *testing.T) {
	url := brokertest.Require(t)
	brokertest.DeleteQueues(t, "orders.new")
	t.Cleanup(func() { brokertest.DeleteQueues(t, "orders.new") })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, url, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, line := range []string{
		"A-1: attempt 1\n", "A-1: attempt 2\n", "A-1: attempt 3\n", "A-1: attempt 4\n",
		"A-2: attempt 1\n", "dead letters: 2\n",
	} {
		if strings.Count(got, line) != 1 {
			t.Errorf("output has %q %d times, want once:\n%s", line, strings.Count(got, line), got)
		}
	}
	if strings.Contains(got, "A-2: attempt 2") || strings.Contains(got, "A-1: attempt 5") || strings.Contains(got, "reserved") {
		t.Errorf("an attempt the policy does not allow, or a reservation:\n%s", got)
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
