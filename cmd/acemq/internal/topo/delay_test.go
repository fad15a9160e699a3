package topo

import (
	"context"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
)

// The delay topology is one group in a diff: missing, it is one line
// counting its exchanges, queues and bindings (the exchange-to-exchange
// ones included); declared with other levels, one line per argument that
// differs, with how many queues; declared as asked, nothing.
func TestDiffGroupsTheDelayTopology(t *testing.T) {
	url := brokertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	name := brokertest.Name("topo")
	prefix := name + wire.DelayPrefixSuffix
	t.Cleanup(func() {
		_, ch := brokertest.Raw(t)
		for n := range wire.DelayLevels {
			_, _ = ch.QueueDelete(wire.DelayLevel(prefix, n), false, false, false)
			_ = ch.ExchangeDelete(wire.DelayLevel(prefix, n), false, false)
		}
		_ = ch.ExchangeDelete(wire.DelayDelivery(prefix), false, false)
		_ = ch.ExchangeDelete(name, false, false)
	})
	client, err := rabbithole.NewClient(brokertest.MgmtURL(), "guest", "guest")
	if err != nil {
		t.Fatal(err)
	}
	vhost := "/"
	if u, err := neturl.Parse(url); err == nil && strings.TrimPrefix(u.Path, "/") != "" {
		vhost = strings.TrimPrefix(u.Path, "/")
	}
	top := &runtime.Topology{Exchanges: []runtime.Exchange{{Name: name, Kind: "topic"}}, Delay: runtime.Classic, DelayPrefix: prefix}
	diffs, err := Diff(client, vhost, top)
	if err != nil {
		t.Fatal(err)
	}
	want := "missing exchange " + name + "\nmissing delay topology " + prefix + ".* (28 levels): 29 exchanges, 28 queues, 57 bindings\n"
	if got := Lines(diffs); !strings.Contains(got, "missing delay topology "+prefix+".* (28 levels): 29 exchanges, 28 queues, 57 bindings\n") || strings.Count(got, "\n") != 2 {
		t.Errorf("Lines =\n%s\nwant\n%s", got, want)
	}
	c, err := runtime.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if err := c.Declare(ctx, top); err != nil {
		t.Fatal(err)
	}
	if diffs, err = Diff(client, vhost, top); err != nil || len(diffs) != 0 {
		t.Errorf("after Declare: %v %v", diffs, err)
	}
	quorum := *top
	quorum.Delay = runtime.Quorum
	if diffs, err = Diff(client, vhost, &quorum); err != nil {
		t.Fatal(err)
	}
	got := Lines(diffs)
	for _, line := range []string{
		"delay topology " + prefix + ".*: x-queue-type is classic on the broker, quorum in the manifest (28 queues)",
		"delay topology " + prefix + ".*: x-overflow is absent on the broker, reject-publish in the manifest (28 queues)",
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("Lines lacks %q:\n%s", line, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 3 {
		t.Errorf("%d lines, want 3 (type, strategy, overflow):\n%s", n, got)
	}
}
