package jsonschemaall_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/acemq/acemq-go/golden/jsonschema-all/want"
	"github.com/acemq/acemq-go/internal/goldentest"
	"github.com/acemq/acemq-go/runtime"
)

type handler struct {
	got chan *runtime.Message[jsonschemaall.Everything]
}

func (h *handler) HandleEverything(_ context.Context, m *runtime.Message[jsonschemaall.Everything]) runtime.Ack {
	h.got <- m
	return runtime.Accept()
}

// Every JSON Schema construct survives a trip through a fanout exchange:
// the value the typed publisher encodes (and validates) is the value the
// typed handler decodes.
func TestEveryJSONSchemaConstructRoundTrips(t *testing.T) {
	ctx, conn := goldentest.Connect(t, jsonschemaall.Topology())
	h := &handler{got: make(chan *runtime.Message[jsonschemaall.Everything], 1)}
	consumer, err := jsonschemaall.ConsumeJSONAll(ctx, conn, h)
	if err != nil {
		t.Fatalf("ConsumeJSONAll: %v", err)
	}
	defer consumer.Close(context.Background())

	want := everything()
	if err := jsonschemaall.NewFanoutPublisher(conn).PublishEverything(ctx, want); err != nil {
		t.Fatalf("PublishEverything: %v", err)
	}
	m := goldentest.Receive(t, h.got, "Everything")
	goldentest.CheckEnvelope(t, m.Envelope, "golden.jsonschema.everything.v1")
	if !reflect.DeepEqual(m.Payload, want) {
		t.Errorf("payload\n%+v\nwant\n%+v", m.Payload, want)
	}

	// The publisher validates against the schema: a currency the pattern
	// refuses is an error, and nothing is sent.
	bad := want
	bad.Money = &jsonschemaall.Money{Amount: 1, Currency: "euro"}
	if err := jsonschemaall.NewFanoutPublisher(conn).PublishEverything(ctx, bad); err == nil {
		t.Errorf("publishing a currency of %q succeeded; want a validation error", "euro")
	}
}

// everything is the value the tests send, one of each construct.
func everything() jsonschemaall.Everything {
	note, street, qty := "hello", "1 Quay St", int64(3)
	updated := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	want := jsonschemaall.Everything{
		ID: "0b7c6a51-4f5e-4c1a-9d57-5d2f4b0b2a11", Count: 3, Ratio: 0.25, Active: true,
		Status:    jsonschemaall.EverythingStatusLive,
		Tags:      []string{"a", "b"},
		Address:   jsonschemaall.EverythingAddress{City: "Lyon"},
		Billing:   &jsonschemaall.EverythingAddress{Street: &street, City: "Oslo"},
		CreatedAt: time.Date(2026, 11, 30, 9, 15, 1, 123_000_000, time.UTC),
		UpdatedAt: &updated,
		Labels:    map[string]string{"team": "orders"},
		Scores:    map[string]int64{"x": 7},
		Note:      &note,
		Tree:      &jsonschemaall.EverythingTree{Name: "root", Children: []jsonschemaall.EverythingTree{{Name: "leaf"}}},
		Items:     []jsonschemaall.EverythingItemsItem{{Sku: "SKU-1", Quantity: &qty}},
		Money:     &jsonschemaall.Money{Amount: 1999, Currency: "EUR"},
	}
	return want
}

// Without a broker: the message type's codec round-trips the value.
func TestCodecRoundTrip(t *testing.T) {
	goldentest.RoundTrip(t, jsonschemaall.TypeOfEverything(), everything())
}
