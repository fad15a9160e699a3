package reminders_test

import (
	"context"
	"testing"
	"time"

	"github.com/acemq/acemq-go/golden/reminders/want"
	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/internal/goldentest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
)

type handler struct {
	got chan *runtime.Message[reminders.ReminderDue]
	at  chan time.Time
}

func (h *handler) HandleReminderDue(_ context.Context, m *runtime.Message[reminders.ReminderDue]) runtime.Ack {
	h.at <- time.Now()
	h.got <- m
	return runtime.Accept()
}

// The generated delayed methods: After and At each deliver to the
// exchange's queue once their time has come (1 s and 2 s here, through
// the quorum levels the manifest asks for), not before, with the message
// and its routing key as published.
func TestPublishAfterAndAt(t *testing.T) {
	topo := reminders.Topology()
	if topo.Delay != runtime.Quorum {
		t.Fatalf("Topology().Delay = %q, want quorum (delay_levels: quorum)", topo.Delay)
	}
	topo.DelayPrefix = brokertest.Name("reminders") + wire.DelayPrefixSuffix // never the shared acemq.delay
	ctx, conn := goldentest.Connect(t, topo)
	h := &handler{got: make(chan *runtime.Message[reminders.ReminderDue], 2), at: make(chan time.Time, 2)}
	consumer, err := reminders.ConsumeDue(ctx, conn, h)
	if err != nil {
		t.Fatalf("ConsumeDue: %v", err)
	}
	defer consumer.Close(context.Background())
	pub := reminders.NewRemindersPublisher(conn)
	start := time.Now()
	if err := pub.PublishReminderDueAt(ctx, start.Add(2*time.Second), reminders.ReminderDue{CustomerID: "C-1", Text: "at"}); err != nil {
		t.Fatalf("PublishReminderDueAt: %v", err)
	}
	if err := pub.PublishReminderDueAfter(ctx, time.Second, reminders.ReminderDue{CustomerID: "C-1", Text: "after"}); err != nil {
		t.Fatalf("PublishReminderDueAfter: %v", err)
	}
	for _, want := range []struct {
		text string
		d    time.Duration
	}{{"after", time.Second}, {"at", 2 * time.Second}} {
		at := goldentest.Receive(t, h.at, want.text)
		m := goldentest.Receive(t, h.got, want.text)
		if m.Payload.Text != want.text || m.RoutingKey != "reminder.due" {
			t.Errorf("got %q with key %q, want %q with reminder.due", m.Payload.Text, m.RoutingKey, want.text)
		}
		if late := at.Sub(start); late < want.d || late > want.d+1500*time.Millisecond {
			t.Errorf("%q arrived %s after the publish, want %s..%s", want.text, late, want.d, want.d+1500*time.Millisecond)
		}
		goldentest.CheckEnvelope(t, m.Envelope, "reminder.due.v1")
	}
}

func TestCodecRoundTrip(t *testing.T) {
	goldentest.RoundTrip(t, reminders.TypeOfReminderDue(), reminders.ReminderDue{CustomerID: "C-1", Text: "pay invoice 7"})
}
