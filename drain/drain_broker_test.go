package drain_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/drain"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// management is a rabbit-hole client of the test broker's management API
// and the test vhost.
func management(t *testing.T) (*rabbithole.Client, string) {
	t.Helper()
	u, err := url.Parse(acemqtest.Require(t))
	if err != nil {
		t.Fatal(err)
	}
	user := u.User.Username()
	pass, _ := u.User.Password()
	c, err := rabbithole.NewClient(acemqtest.MgmtURL(), user, pass)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Overview(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true: the management API must answer: %v", err)
		}
		t.Skipf("no management API: %v", err)
	}
	vhost := strings.TrimPrefix(u.Path, "/")
	if vhost == "" {
		vhost = "/"
	}
	return c, vhost
}

// waitReport checks q until cond holds (the management plugin samples
// every few seconds) and returns the last report.
func waitReport(t *testing.T, c *rabbithole.Client, vhost, q, what string, cond func(drain.Report) bool) drain.Report {
	t.Helper()
	var r drain.Report
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		r, err = drain.Check(context.Background(), c, vhost, q, drain.Options{})
		if err != nil {
			t.Fatalf("Check %s: %v", q, err)
		}
		if cond(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited for %s; last report %+v", what, r)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// On the real broker: three messages and no consumer are not draining,
// with their oldest message's age; once a consumer takes them the queue is
// empty and draining; a queue that is not there is ErrQueueNotFound.
func TestCheckOnTheBroker(t *testing.T) {
	t.Parallel()
	mc, vhost := management(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := runtime.Dial(ctx, acemqtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	q := acemqtest.Queue(t, "drain")
	if err := conn.Declare(ctx, runtime.NewTopology().Queue(runtime.Queue{Name: q})); err != nil {
		t.Fatal(err)
	}
	mt := runtime.NewTextType("drain.test")
	for _, body := range []string{"a", "b", "c"} {
		if err := runtime.Publish(ctx, conn, mt, "", body, runtime.WithRoutingKey(q)); err != nil {
			t.Fatal(err)
		}
	}
	// The management plugin samples every few seconds; the head's
	// timestamp may come a sample after the depth.
	r := waitReport(t, mc, vhost, q, "depth 3 and the oldest message's age", func(r drain.Report) bool { return r.Depth == 3 && r.OldestKnown })
	if r.Draining || r.Consumers != 0 || r.Ready != 3 || !strings.Contains(r.Why, "3 messages and no consumer") {
		t.Errorf("no consumer: %+v", r)
	}
	if !r.OldestKnown || r.OldestAge < 0 || r.OldestAge > time.Minute {
		t.Errorf("oldest message: known %v age %s, want known and under a minute", r.OldestKnown, r.OldestAge)
	}
	if ok, why := drain.Verdict(r, drain.Options{MaxAge: time.Nanosecond}); ok || !strings.Contains(why, "oldest message") {
		t.Errorf("with MaxAge 1ns: %v %q", ok, why)
	}

	cs, err := runtime.Consume(ctx, conn, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
		runtime.Handle(mt, func(context.Context, *runtime.Message[string]) runtime.Ack { return runtime.Accept() }),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(context.Background())
	r = waitReport(t, mc, vhost, q, "empty with a consumer", func(r drain.Report) bool { return r.Depth == 0 && r.Consumers == 1 })
	if !r.Draining || r.Why != "empty" || r.OldestKnown {
		t.Errorf("consumed: %+v", r)
	}

	_, err = drain.Check(ctx, mc, vhost, q+".not.there", drain.Options{})
	if !errors.Is(err, drain.ErrQueueNotFound) {
		t.Errorf("missing queue: %v, want ErrQueueNotFound", err)
	}
}

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		r    drain.Report
		want bool
		why  string
	}{
		{drain.Report{}, true, "empty"},
		{drain.Report{Depth: 5}, false, "5 messages and no consumer"},
		{drain.Report{Depth: 5, Consumers: 2}, false, "5 messages, 2 consumers, nothing delivered or acked"},
		{drain.Report{Depth: 500, Consumers: 2, PublishRate: 100, AckRate: 40, DeliverRate: 40}, false, "acks 40.0/s behind publishes 100.0/s"},
		{drain.Report{Depth: 500, Consumers: 2, PublishRate: 100, AckRate: 120, DeliverRate: 120}, true, "acks 120.0/s, publishes 100.0/s"},
	} {
		ok, why := drain.Verdict(c.r, drain.Options{})
		if ok != c.want || why != c.why {
			t.Errorf("Verdict(%+v) = %v %q, want %v %q", c.r, ok, why, c.want, c.why)
		}
	}
}
