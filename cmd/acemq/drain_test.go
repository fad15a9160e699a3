package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/cmd/acemq/internal/cli"
	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime"
)

// acemq drain on the real broker: a queue of 3 messages and no consumer
// does not drain (exit 1, its oldest message's age shown); a queue whose
// consumer works through a backlog of 800 drains while it is still deep
// (acks at least as fast as publishes: exit 0 alone); both at once exit
// 1, naming the one that does not. The management plugin samples every
// 5s, so the command is run until the broker's figures are in.
func TestDrainCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	brokertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := runtime.Dial(ctx, brokertest.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	idle, busy := brokertest.Queue(t, "cli-drain-idle"), brokertest.Queue(t, "cli-drain-busy")
	if err := conn.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: idle}).Queue(runtime.Queue{Name: busy})); err != nil {
		t.Fatal(err)
	}
	mt := runtime.NewTextType("drain.cli.test")
	publish := func(q string, n int) {
		for i := range n {
			if err := runtime.Publish(ctx, conn, mt, "", strconv.Itoa(i), runtime.WithRoutingKey(q)); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish(idle, 3)
	publish(busy, 800)
	cs, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{Queue: busy, Routes: []runtime.Route{
		runtime.Handle(mt, func(context.Context, *runtime.Message[string]) runtime.Ack {
			time.Sleep(25 * time.Millisecond) // ~40/s: the backlog lasts 20s or more
			return runtime.Accept()
		}),
	}}, runtime.WithPrefetch(10))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(context.Background())

	run := func(args ...string) (int, string, string) {
		var stdout, stderr strings.Builder
		code := cli.Main(append([]string{"--url", brokertest.URL(), "--mgmt-url", brokertest.MgmtURL()}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	// row is the columns of q's line: QUEUE DEPTH READY UNACKED CONSUMERS
	// PUBLISH/S DELIVER/S ACK/S OLDEST VERDICT...
	row := func(out, q string) []string {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 9 && f[0] == q {
				return f
			}
		}
		return nil
	}
	num := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
	var code int
	var out, errOut string
	deadline := time.Now().Add(time.Minute)
	for {
		code, out, errOut = run("drain", idle, busy)
		i, b := row(out, idle), row(out, busy)
		// The busy queue's first samples may still count the burst of
		// publishes (acks behind them): wait for a draining verdict.
		if i != nil && b != nil && i[1] == "3" && i[8] != "-" && num(b[1]) > 0 && b[4] == "1" && num(b[7]) > 0 && b[9] == "draining:" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker's figures did not come within a minute; last run exit %d:\n%s%s", code, out, errOut)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, want := range []string{
		`(?m)^QUEUE +DEPTH +READY +UNACKED +CONSUMERS +PUBLISH/S +DELIVER/S +ACK/S +OLDEST +VERDICT$`,
		`(?m)^` + regexp.QuoteMeta(idle) + ` +3 +3 +0 +0 +[0-9.]+ +0\.0 +0\.0 +[0-9]+s +NOT DRAINING: 3 messages and no consumer$`,
		// UNACKED: up to the prefetch (10) plus the hold budget and the
		// ack slack, each as large.
		`(?m)^` + regexp.QuoteMeta(busy) + ` +[0-9]+ +[0-9]+ +([0-9]|[12][0-9]|30) +1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +\S+ +draining: acks [0-9.]+/s, publishes [0-9.]+/s$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("drain output lacks %s:\n%s", want, out)
		}
	}
	if code != cli.ExitFail || !strings.Contains(errOut, "acemq: 1 of 2 queues not draining: "+idle+"\n") {
		t.Errorf("drain %s %s: exit %d, stderr %q; want 1 naming %s", idle, busy, code, errOut, idle)
	}

	// The draining one alone: exit 0 (while deep, or empty by now).
	if code, out, errOut := run("drain", busy); code != cli.ExitOK || !strings.Contains(out, "draining: ") || errOut != "" {
		t.Errorf("drain %s: exit %d\n%s%s; want 0", busy, code, out, errOut)
	}
	// --max-age below the idle queue's oldest message.
	if code, out, _ := run("drain", idle, "--max-age", "1ms"); code != cli.ExitFail || !regexp.MustCompile(`NOT DRAINING: the oldest message is [0-9]+s old, over 1ms`).MatchString(out) {
		t.Errorf("drain --max-age 1ms: exit %d\n%s", code, out)
	}
	// --json: the report's fields.
	code, out, _ = run("drain", idle, "--json")
	var r struct {
		Queue       string  `json:"queue"`
		Depth       int     `json:"depth"`
		Consumers   int     `json:"consumers"`
		AckRate     float64 `json:"ack_rate"`
		OldestKnown bool    `json:"oldest_known"`
		OldestAge   string  `json:"oldest_age"`
		Draining    bool    `json:"draining"`
		Why         string  `json:"why"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != cli.ExitFail {
		t.Fatalf("drain --json: exit %d, %v:\n%s", code, err, out)
	}
	if r.Queue != idle || r.Depth != 3 || r.Consumers != 0 || !r.OldestKnown || r.OldestAge == "" || r.Draining || r.Why != "3 messages and no consumer" {
		t.Errorf("drain --json: %+v", r)
	}
}
