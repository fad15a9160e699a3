package rt

// This file is copied next to the code generated from the .avsc files
// here (see roundtrip_test.go in internal/gen/schema) and run as a test.

import (
	"bytes"
	"encoding/json"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

func schemaOf(t *testing.T, file string) avro.Schema {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := avro.ParseWithCache(string(data), "", &avro.SchemaCache{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// apis are hamba's default configuration and one of its own, as the
// runtime uses: the generated unions need no registration with either.
var apis = map[string]avro.API{
	"default": avro.DefaultConfig,
	"own":     avro.Config{MaxByteSliceSize: 16 << 20, MaxSliceAllocSize: 1 << 20}.Freeze(),
}

// roundTrip encodes v with hamba/avro, decodes it into out, and checks
// that both hold the same value (compared as JSON, which also proves the
// JSON tags), and that a JSON round trip keeps it too; with each of apis.
func roundTrip[T any](t *testing.T, s avro.Schema, v T) T {
	t.Helper()
	var out T
	for name, api := range apis {
		out = roundTripWith(t, name, api, s, v)
	}
	return out
}

func roundTripWith[T any](t *testing.T, name string, api avro.API, s avro.Schema, v T) T {
	t.Helper()
	data, err := api.Marshal(s, v)
	if err != nil {
		t.Fatalf("%s: Marshal: %v", name, err)
	}
	var out T
	if err := api.Unmarshal(s, data, &out); err != nil {
		t.Fatalf("%s: Unmarshal: %v", name, err)
	}
	want, _ := json.Marshal(v)
	got, _ := json.Marshal(out)
	if !bytes.Equal(want, got) {
		t.Fatalf("avro round trip changed the value:\nwant %s\ngot  %s", want, got)
	}
	var back T
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatalf("json.Unmarshal: %v", err)
	}
	again, _ := json.Marshal(back)
	if !bytes.Equal(want, again) {
		t.Fatalf("json round trip changed the value:\nwant %s\ngot  %s", want, again)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestOrderRoundTrip(t *testing.T) {
	s := schemaOf(t, "order.avsc")
	ms := time.UnixMilli(1_700_000_000_123).UTC()
	line := OrderLine{Sku: "A-1", Qty: 2}
	child := Order{
		ID: "c", Placed: ms, PlacedMicros: ms, LocalPlaced: ms, Day: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		Amount: big.NewRat(1, 4), FixedAmount: big.NewRat(-3, 2), Suit: OrderSuitHearts,
		RequiredChoice: &OrderRequiredChoice{Boolean: ptr(false)},
		// hamba/avro decodes an empty array or map as empty, not nil.
		Tags: []string{}, Attrs: map[string]int64{}, Lines: []OrderLine{}, Children: []Order{},
		ByName: map[string]OrderLine{}, Choices: []*OrderChoicesItem{}, Raw: []byte{},
	}
	v := Order{
		ID:             "6f1c8e2a-0b7d-4c5e-9a3f-2d1e0c9b8a7f",
		Placed:         ms,
		PlacedMicros:   time.UnixMicro(1_700_000_000_123_456).UTC(),
		LocalPlaced:    ms,
		Day:            time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		At:             3*time.Hour + 4*time.Millisecond,
		AtMicros:       5*time.Hour + 6*time.Microsecond,
		Amount:         big.NewRat(12345, 100),
		FixedAmount:    big.NewRat(-5, 100),
		Discount:       ptr(big.NewRat(1, 2)),
		Shipped:        &ms,
		Suit:           OrderSuitSpades,
		Hash:           OrderMD5{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		Tags:           []string{"a", "b"},
		Attrs:          map[string]int64{"x": -1, "y": 1 << 40},
		Note:           ptr("hello"),
		Lines:          []OrderLine{line, {Sku: "B", Qty: 3}},
		Parent:         &child,
		Children:       []Order{child},
		ByName:         map[string]OrderLine{"a": line},
		OptTags:        []string{"t"},
		OptMap:         &map[string]int32{"k": 7},
		OptLine:        &line,
		Choice:         &OrderChoice{Line: &line},
		RequiredChoice: &OrderRequiredChoice{TimestampMillis: &ms},
		Choices:        []*OrderChoicesItem{{Int: ptr(int32(4))}, {String: ptr("four")}},
		Deep:           &OrderDeepUnion{Float: ptr(float32(2))},
		Flag:           true,
		Ratio:          0.5,
		Score:          -2.25,
		Raw:            []byte{0, 255},
		Type:           "keyword",
		Func:           1,
		Func2:          2,
	}
	got := roundTrip(t, s, v)
	if got.Amount.Cmp(v.Amount) != 0 || got.Parent.FixedAmount.Cmp(child.FixedAmount) != 0 {
		t.Fatalf("decimal changed: %v %v", got.Amount, got.Parent.FixedAmount)
	}

	for name, d := range map[string]*OrderDeepUnion{
		"record": {Deep: &OrderDeep{Inner: &OrderDeepInner{Line: &line}, Opt: ptr("o"), When: ms, H: OrderMD5{7}, S: OrderSuitHearts, Dec: big.NewRat(314, 100)}},
		"inner":  {Deep: &OrderDeep{Inner: &OrderDeepInner{String: ptr("s")}, When: ms, S: OrderSuitSpades, Dec: big.NewRat(0, 1)}},
		"array":  {Array: &[]Order{child}},
		"float":  {Float: ptr(float32(1.5))},
		"nil":    nil,
	} {
		t.Run("deep "+name, func(t *testing.T) {
			w := v
			w.Deep = d
			roundTrip(t, s, w)
		})
	}

	for name, c := range map[string]*OrderChoice{
		"nil":    nil,
		"int":    {Int: ptr(int32(-7))},
		"string": {String: ptr("s")},
		"array":  {Array: &[][]byte{{1}, {2, 3}}},
		"enum":   {Suit: ptr(OrderSuitHearts)},
		"fixed":  {MD5: &OrderMD5{9}},
		"map":    {Map: &map[string]string{"a": "b"}},
	} {
		t.Run(name, func(t *testing.T) {
			w := v
			w.Choice = c
			w.RequiredChoice = &OrderRequiredChoice{Long: ptr(int64(42))}
			w.Discount, w.Shipped, w.Note, w.OptTags, w.OptMap, w.OptLine, w.Parent = nil, nil, nil, nil, nil, nil, nil
			roundTrip(t, s, w)
		})
	}
}

func TestRootForms(t *testing.T) {
	roundTrip(t, schemaOf(t, "event.avsc"), Event(&EventUnion{Ping: &EventPing{N: 3}}))
	roundTrip(t, schemaOf(t, "event.avsc"), Event(&EventUnion{Int: ptr(int32(3))}))
	roundTrip(t, schemaOf(t, "event.avsc"), Event(nil))
	roundTrip(t, schemaOf(t, "maybe.avsc"), MaybePong(&MaybePongPong{N: 9}))
	roundTrip(t, schemaOf(t, "maybe.avsc"), MaybePong(nil))
	roundTrip(t, schemaOf(t, "strings.avsc"), Strings{"a", "b"})
	roundTrip(t, schemaOf(t, "rank.avsc"), RankKing)
	roundTrip(t, schemaOf(t, "id.avsc"), Ident{1, 2, 3, 4})
	roundTrip(t, schemaOf(t, "when.avsc"), When(time.UnixMilli(5).UTC()))
}
