package main

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/brokertest"
)

// TestWaitingRuns smoke-runs the waiting subcommand (issue 24's rungs
// against native delayed retry, and issue 40's delay topology) with a few messages and a 1 s wait: a line
// per side that ran, with its rate, its times and its memory, and the
// native side skipped with the reason before RabbitMQ 4.3. Not a
// measurement.
func TestWaitingRuns(t *testing.T) {
	broker := ownVhost(t)
	var out bytes.Buffer
	err := waitingMain([]string{"--url", broker, "--mgmt", mgmtWithUser(t, broker), "--n", "50", "--wait", "1s", "--settle", "200ms", "--samples", "1"}, &out)
	if err != nil {
		t.Fatalf("waiting: %v\n%s", err, out.String())
	}
	text := out.String()
	native := sideNative + ` +skipped: RabbitMQ [0-9.]+ has no quorum-queue delayed retry`
	if strings.Contains(text, "\n"+sideNative+" ") && !regexp.MustCompile(`(?m)^`+native).MatchString(text) {
		native = sideNative
	}
	for _, side := range []string{sideRungs, sideQuorumRungs, native, sideDelay, sideQuorumDelay} {
		row := `(?m)^` + side + ` +into waiting +[0-9]+ msg/s \([0-9.]+m?s\), first back [0-9.]+m?s, all back [0-9.]+m?s, early 0; broker memory \(erlang\) empty [0-9.]+ MiB`
		if strings.Contains(side, "skipped") {
			row = `(?m)^` + side
		}
		if !regexp.MustCompile(row).MatchString(text) {
			t.Errorf("no line for %s:\n%s", side, text)
		}
	}
	if !strings.Contains(text, "50 messages (the 1k order in Avro), each failing once and waiting 1s") {
		t.Errorf("the report does not say how it was made:\n%s", text)
	}
}

// mgmtWithUser is the test broker's management API with the AMQP URL's
// user in it.
func mgmtWithUser(t *testing.T, amqpURL string) string {
	t.Helper()
	a, err := url.Parse(amqpURL)
	if err != nil {
		t.Fatal(err)
	}
	m, err := url.Parse(brokertest.MgmtURL())
	if err != nil {
		t.Fatal(err)
	}
	m.User = a.User
	return m.String()
}
