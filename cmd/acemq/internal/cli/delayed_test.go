package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
)

// acemq delayed counts what waits at each level of a delay topology of the
// test's own (never the shared acemq.delay), bounds the next due by the
// lowest level holding messages, and with --peek reads the due times.
func TestDelayed(t *testing.T) {
	url := brokertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	name := brokertest.Name("delayed")
	prefix := name + wire.DelayPrefixSuffix
	c, err := runtime.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	topo := &runtime.Topology{Exchanges: []runtime.Exchange{{Name: name, Kind: amqp.ExchangeTopic}}, Delay: runtime.Classic, DelayPrefix: prefix}
	t.Cleanup(func() {
		_, ch := brokertest.Raw(t)
		for n := range wire.DelayLevels {
			_, _ = ch.QueueDelete(wire.DelayLevel(prefix, n), false, false, false)
			_ = ch.ExchangeDelete(wire.DelayLevel(prefix, n), false, false)
		}
		_ = ch.ExchangeDelete(wire.DelayDelivery(prefix), false, false)
		_ = ch.ExchangeDelete(name, false, false)
	})
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out}
	if err := e.delayed(ctx, c, prefix, false); err == nil || !strings.Contains(err.Error(), "is the delay topology declared under the prefix") {
		t.Errorf("delayed before the topology is declared = %v, want it to say so", err)
	}
	if err := c.Declare(ctx, topo); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := e.delayed(ctx, c, prefix, false); err != nil || !strings.Contains(out.String(), "no message waits in "+prefix) {
		t.Errorf("empty topology: %v\n%s", err, out.String())
	}
	mt := runtime.NewTextType("acemq.test.text")
	for _, d := range []time.Duration{40 * time.Second, 50 * time.Second, time.Hour} {
		if err := runtime.Publish(ctx, c, mt, name, "later", runtime.WithRoutingKey("k"), runtime.WithDelay(d)); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	if err := e.delayed(ctx, c, prefix, true); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	// 40 s and 50 s wait in level 5 (32 s), an hour in level 11 (2048 s).
	for _, re := range []string{
		`(?m)^5 +` + regexp.QuoteMeta(wire.DelayLevel(prefix, 5)) + ` +32s +2$`,
		`(?m)^11 +` + regexp.QuoteMeta(wire.DelayLevel(prefix, 11)) + ` +34m8s +1$`,
		`(?m)^0 +` + regexp.QuoteMeta(wire.DelayLevel(prefix, 0)) + ` +1s +0$`,
		`(?m)^3 messages wait; the next is due within 1m3s \(level 5 holds messages\)$`,
		`(?m)^the earliest due of the levels' first messages: \S+ \(in (39|40)s\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(got) {
			t.Errorf("output lacks %s:\n%s", re, got)
		}
	}
	if n, _ := c.MessageCount(ctx, wire.DelayLevel(prefix, 5)); n != 2 {
		t.Errorf("level 5 holds %d after the peek, want 2 (given back)", n)
	}
}
