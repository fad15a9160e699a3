package rt

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/registry"
)

// The generated types, unions included, go through the runtime's own Avro
// codec (its own hamba/avro configuration, the Confluent framing).
func TestRuntimeAvroCodec(t *testing.T) {
	ctx := context.Background()
	text, err := os.ReadFile("order.avsc")
	if err != nil {
		t.Fatal(err)
	}
	codec, err := runtime.NewAvroCodec(registry.NewMemory(), "orders", string(text))
	if err != nil {
		t.Fatal(err)
	}
	ms := time.UnixMilli(1_700_000_000_123).UTC()
	line := OrderLine{Sku: "A-1", Qty: 2}
	v := Order{
		ID: "x", Placed: ms, PlacedMicros: ms, LocalPlaced: ms, Day: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		Amount: big.NewRat(1, 4), FixedAmount: big.NewRat(-3, 2), Suit: OrderSuitHearts,
		Tags: []string{}, Attrs: map[string]int64{}, Lines: []OrderLine{line}, Children: []Order{},
		ByName: map[string]OrderLine{}, Raw: []byte{},
		Choice:         &OrderChoice{Line: &line},
		RequiredChoice: &OrderRequiredChoice{TimestampMillis: &ms},
		Choices:        []*OrderChoicesItem{{Int: ptr(int32(4))}},
		Deep:           &OrderDeepUnion{Deep: &OrderDeep{Inner: &OrderDeepInner{Line: &line}, When: ms, S: OrderSuitSpades, Dec: big.NewRat(1, 2)}},
	}
	body, err := codec.Encode(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	var got Order
	if err := codec.Decode(ctx, body, &got); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(v)
	have, _ := json.Marshal(got)
	if !bytes.Equal(want, have) {
		t.Fatalf("runtime codec changed the value:\nwant %s\ngot  %s", want, have)
	}
}
