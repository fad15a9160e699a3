package avroall_test

import (
	"context"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/acemq/acemq-go/golden/avro-all/want"
	"github.com/acemq/acemq-go/internal/goldentest"
	"github.com/acemq/acemq-go/runtime"
)

type handler struct {
	got chan *runtime.Message[avroall.Everything]
}

func (h *handler) HandleEverything(_ context.Context, m *runtime.Message[avroall.Everything]) runtime.Ack {
	h.got <- m
	return runtime.Accept()
}

// Every Avro construct survives a trip through the broker: the value the
// typed publisher encodes is the value the typed handler decodes.
func TestEveryAvroConstructRoundTrips(t *testing.T) {
	ctx, conn := goldentest.Connect(t, avroall.Topology())
	h := &handler{got: make(chan *runtime.Message[avroall.Everything], 1)}
	consumer, err := avroall.ConsumeAvroAll(ctx, conn, h)
	if err != nil {
		t.Fatalf("ConsumeAvroAll: %v", err)
	}
	defer consumer.Close(context.Background())

	want := everything()
	if err := avroall.NewDirectPublisher(conn).PublishEverything(ctx, want); err != nil {
		t.Fatalf("PublishEverything: %v", err)
	}
	m := goldentest.Receive(t, h.got, "Everything")
	goldentest.CheckEnvelope(t, m.Envelope, "golden.avro.everything.v1")
	got := m.Payload
	if got.Price == nil || got.Price.Cmp(want.Price) != 0 {
		t.Errorf("price %v, want %v", got.Price, want.Price)
	}
	for _, c := range []struct {
		name      string
		got, want time.Time
	}{{"at", got.At, want.At}, {"at_micros", got.AtMicros, want.AtMicros}, {"day", got.Day, want.Day}} {
		if !c.got.Equal(c.want) {
			t.Errorf("%s %v, want %v", c.name, c.got, c.want)
		}
	}
	if got.MaybeAt == nil || !got.MaybeAt.Equal(*want.MaybeAt) {
		t.Errorf("maybe_at %v, want %v", got.MaybeAt, want.MaybeAt)
	}
	// The rest compares as is.
	got.Price, want.Price = nil, nil
	got.At, got.AtMicros, got.Day, got.MaybeAt = want.At, want.AtMicros, want.Day, want.MaybeAt
	if !reflect.DeepEqual(got, want) {
		t.Errorf("payload\n%+v\nwant\n%+v", got, want)
	}
}

// everything is the value the tests send, one of each construct.
func everything() avroall.Everything {
	nick, long := "bob", int64(42)
	at := time.Date(2026, 11, 30, 9, 15, 1, 123_000_000, time.UTC)
	want := avroall.Everything{
		Flag: true, Small: -7, Big: 1 << 40, Ratio: 0.5, Precise: 3.25, Blob: []byte{0, 1, 2},
		Name: "alice", Suit: avroall.EverythingSuitHearts, Hash: avroall.EverythingMD5{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		Tags: []string{"a", "b"}, Counts: map[string]int64{"x": 1, "y": 2},
		Nickname:  &nick,
		Address:   &avroall.EverythingAddress{Street: "1 Quay St", City: "Lyon"},
		Addresses: []avroall.EverythingAddress{{Street: "2 Main St", City: "Oslo"}},
		IDOrName:  &avroall.EverythingIDOrName{Long: &long},
		Chain:     avroall.EverythingNode{Value: 1, Next: &avroall.EverythingNode{Value: 2}},
		At:        at,
		AtMicros:  time.Date(2026, 11, 30, 9, 15, 1, 123_456_000, time.UTC),
		Day:       time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
		Price:     big.NewRat(1999, 100),
		RequestID: "0b7c6a51-4f5e-4c1a-9d57-5d2f4b0b2a11",
		MaybeAt:   &at,
	}
	return want
}

// Without a broker: the message type's codec round-trips the value.
func TestCodecRoundTrip(t *testing.T) {
	goldentest.RoundTrip(t, avroall.TypeOfEverything(), everything())
}
