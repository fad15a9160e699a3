package codec

import (
	"context"
	"encoding/binary"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/internal/schemareg"
)

// The Ruby tutorial's step 7: a producer on v1, a consumer on v2, which
// adds currency with a default.
const (
	codecOrderV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`
	codecOrderV2 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},
		{"name":"currency","type":"string","default":"EUR"}]}`
)

type codecOrderV1Go struct {
	ID string `avro:"id"`
}

type codecOrderV2Go struct {
	ID       string `avro:"id"`
	Currency string `avro:"currency"`
}

func codecMustAvro(t testing.TB, reg msgtype.SchemaRegistry, subject, schema string) msgtype.Codec {
	t.Helper()
	c, err := NewAvroCodec(reg, subject, schema)
	if err != nil {
		t.Fatalf("NewAvroCodec: %v", err)
	}
	return c
}

func TestAvroCodecRoundTripThroughRegistry(t *testing.T) {
	ctx := context.Background()
	reg := schemareg.NewMemory()
	c := codecMustAvro(t, reg, "orders", codecOrderV2)
	if c.ContentType() != "application/vnd.apache.avro+binary" {
		t.Fatalf("content type %q", c.ContentType())
	}
	body, err := c.Encode(ctx, codecOrderV2Go{ID: "A-1", Currency: "USD"})
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	// Confluent wire format: 0x00, id 1 big-endian, then Avro binary:
	// "A-1" is zigzag length 3 (0x06) + bytes, "USD" likewise.
	want := []byte{0, 0, 0, 0, 1, 0x06, 'A', '-', '1', 0x06, 'U', 'S', 'D'}
	if string(body) != string(want) {
		t.Fatalf("body % x, want % x", body, want)
	}
	if got := reg.Versions("orders"); len(got) != 1 || got[0] != 1 {
		t.Fatalf("registered versions %v, want [1]", got)
	}
	var out codecOrderV2Go
	if err := c.Decode(ctx, body, &out); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if out != (codecOrderV2Go{ID: "A-1", Currency: "USD"}) {
		t.Fatalf("got %+v", out)
	}
	// A second codec on another registry-sharing process reads it too.
	other := codecMustAvro(t, reg, "orders", codecOrderV2)
	out = codecOrderV2Go{}
	if err := other.Decode(ctx, body, &out); err != nil || out.Currency != "USD" {
		t.Fatalf("second codec: %+v, %v", out, err)
	}
}

func TestAvroCodecResolvesV1WriterOntoV2Reader(t *testing.T) {
	ctx := context.Background()
	reg := schemareg.NewMemory()
	writer := codecMustAvro(t, reg, "orders", codecOrderV1)
	reader := codecMustAvro(t, reg, "orders", codecOrderV2)

	body, err := writer.Encode(ctx, codecOrderV1Go{ID: "A-1"})
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	var got codecOrderV2Go
	if err := reader.Decode(ctx, body, &got); err != nil {
		t.Fatalf("Decode v1 body as v2: %v", err)
	}
	if got.ID != "A-1" || got.Currency != "EUR" {
		t.Fatalf("got %+v, want {ID:A-1 Currency:EUR}", got)
	}
	// Into a generic map as well, like the Ruby example's hash.
	var m map[string]any
	if err := reader.Decode(ctx, body, &m); err != nil {
		t.Fatalf("Decode into map: %v", err)
	}
	if m["id"] != "A-1" || m["currency"] != "EUR" {
		t.Fatalf("map %v", m)
	}
	// And the other way: a v2 body read by a v1 consumer drops currency.
	body2, err := reader.Encode(ctx, codecOrderV2Go{ID: "B-2", Currency: "GBP"})
	if err != nil {
		t.Fatal(err)
	}
	var old codecOrderV1Go
	if err := writer.Decode(ctx, body2, &old); err != nil || old.ID != "B-2" {
		t.Fatalf("v2 body as v1: %+v, %v", old, err)
	}
}

func TestAvroCodecUnresolvableNamesTheField(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, writer, reader string
		want                 []string
	}{
		{
			name:   "added without default",
			writer: codecOrderV1,
			reader: `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"total","type":"long"}]}`,
			want:   []string{"writer schema 1 cannot be read as the reader schema", "field Order.total:", "no default"},
		},
		{
			name:   "type changed",
			writer: `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"total","type":"string"}]}`,
			reader: `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"total","type":"long"}]}`,
			want:   []string{"field Order.total:", "long", "string"},
		},
		{
			name: "nested type changed",
			writer: `{"type":"record","name":"Order","fields":[{"name":"lines","type":{"type":"array","items":
				{"type":"record","name":"Line","fields":[{"name":"qty","type":"string"}]}}}]}`,
			reader: `{"type":"record","name":"Order","fields":[{"name":"lines","type":{"type":"array","items":
				{"type":"record","name":"Line","fields":[{"name":"qty","type":"int"}]}}}]}`,
			want: []string{"field Order.lines[].qty:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := schemareg.NewMemory()
			w := codecMustAvro(t, reg, "orders", tt.writer)
			r := codecMustAvro(t, reg, "orders", tt.reader)
			var v map[string]any
			switch tt.name {
			case "added without default":
				v = map[string]any{"id": "A-1"}
			case "type changed":
				v = map[string]any{"id": "A-1", "total": "12"}
			default:
				v = map[string]any{"lines": []any{map[string]any{"qty": "1"}}}
			}
			body, err := w.Encode(ctx, v)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			var out map[string]any
			err = r.Decode(ctx, body, &out)
			if err == nil {
				t.Fatalf("decoded an unresolvable pair: %v", out)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			// The answer is cached and stays the same.
			if err2 := r.Decode(ctx, body, &out); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("second decode: %v", err2)
			}
		})
	}
}

func TestAvroCodecWireFormatErrors(t *testing.T) {
	ctx := context.Background()
	reg := schemareg.NewMemory()
	c := codecMustAvro(t, reg, "orders", codecOrderV1)
	good, err := c.Encode(ctx, codecOrderV1Go{ID: "A-1"})
	if err != nil {
		t.Fatal(err)
	}
	unknown := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(unknown[1:5], 99)
	wrongMagic := append([]byte{1}, good[1:]...)

	tests := []struct {
		name string
		body []byte
		want string
		is   error
	}{
		{"empty", nil, "not in the Confluent wire format: the body is 0 bytes, shorter than the 5-byte header", nil},
		{"short", []byte{0, 0, 1}, "not in the Confluent wire format: the body is 3 bytes", nil},
		{"wrong magic byte", wrongMagic, "not in the Confluent wire format: the first byte is 0x01, not the magic byte 0x00", nil},
		{"JSON", []byte(`{"id":"A-1"}`), "not in the Confluent wire format: the first byte is 0x7b", nil},
		{"unknown id", unknown, "look up the writer schema: schema id 99: acemq: schema not found", core.ErrSchemaNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out codecOrderV1Go
			err := c.Decode(ctx, tt.body, &out)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("errors.Is(%v, %v) is false", err, tt.is)
			}
		})
	}
}

func TestAvroCodecTruncatedBodyIsAnErrorNotAPanic(t *testing.T) {
	ctx := context.Background()
	reg := schemareg.NewMemory()
	c := codecMustAvro(t, reg, "payments", codecLogicalSchema)
	body, err := c.Encode(ctx, codecLogicalValue())
	if err != nil {
		t.Fatal(err)
	}
	// Every cut from the header on; each must be a clean error.
	for n := 0; n < len(body); n++ {
		var out codecPayment
		err := c.Decode(ctx, body[:n], &out)
		if err == nil {
			t.Errorf("a body cut at %d of %d bytes decoded: %+v", n, len(body), out)
			continue
		}
		if n >= 5 && !strings.Contains(err.Error(), "the Avro body (writer schema 1) does not decode") {
			t.Errorf("cut at %d: %v", n, err)
		}
	}
	// Lengths that claim far more than the body holds.
	huge := append(append([]byte(nil), body[:5]...), 0xfe, 0xff, 0xff, 0xff, 0x0f)
	var out codecPayment
	if err := c.Decode(ctx, huge, &out); err == nil {
		t.Error("a string claiming 2 GiB decoded")
	}
	arr := codecMustAvro(t, reg, "arr", `{"type":"array","items":"null"}`)
	hb, err := arr.Encode(ctx, []any{nil})
	if err != nil {
		t.Fatal(err)
	}
	hb = append(hb[:5], 0xfe, 0xff, 0xff, 0xff, 0x0f, 0)
	var xs []any
	if err := arr.Decode(ctx, hb, &xs); err == nil {
		t.Error("an array claiming 2^31 items decoded")
	}
}

func TestAvroCodecEncodeErrors(t *testing.T) {
	ctx := context.Background()
	c := codecMustAvro(t, schemareg.NewMemory(), "orders", codecOrderV2)
	_, err := c.Encode(ctx, "just a string")
	if !errors.Is(err, core.ErrInvalidMessage) {
		t.Fatalf("a value that does not fit the schema: %v", err)
	}
	var nilOrder *codecOrderV2Go
	if _, err := c.Encode(ctx, nilOrder); err == nil {
		t.Fatal("encoded a nil pointer")
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	c2 := codecMustAvro(t, schemareg.NewMemory(), "orders", codecOrderV2)
	_, err = c2.Encode(cancelled, codecOrderV2Go{ID: "A"})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), `under subject "orders"`) {
		t.Fatalf("registration under a cancelled ctx: %v", err)
	}
	// A failed registration is retried on the next Encode.
	if _, err := c2.Encode(ctx, codecOrderV2Go{ID: "A"}); err != nil {
		t.Fatalf("after a failed registration: %v", err)
	}
}

func TestAvroCodecConstructorErrors(t *testing.T) {
	reg := schemareg.NewMemory()
	tests := map[string]struct {
		reg             msgtype.SchemaRegistry
		subject, schema string
		want            string
	}{
		"not JSON":        {reg, "s", `{"type":"record"`, "Avro schema does not parse"},
		"unknown type":    {reg, "s", `{"type":"thing"}`, "Avro schema does not parse"},
		"record, no name": {reg, "s", `{"type":"record","fields":[]}`, "Avro schema does not parse"},
		"bad default":     {reg, "s", `{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}`, "Avro schema does not parse"},
		"unknown name":    {reg, "s", `{"type":"record","name":"R","fields":[{"name":"a","type":"Other"}]}`, "Avro schema does not parse"},
		"no registry":     {nil, "s", codecOrderV1, "no schema registry"},
		"no subject":      {reg, "", codecOrderV1, "no registry subject"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := NewAvroCodec(tt.reg, tt.subject, tt.schema)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestAvroCodecWriterSchemaThatDoesNotParse(t *testing.T) {
	ctx := context.Background()
	reg := &codecFakeTextRegistry{text: `{"type":"nonsense"}`}
	c := codecMustAvro(t, reg, "s", codecOrderV1)
	var out codecOrderV1Go
	err := c.Decode(ctx, []byte{0, 0, 0, 0, 7, 2, 'x'}, &out)
	if err == nil || !strings.Contains(err.Error(), "writer schema 7: Avro schema does not parse") {
		t.Fatalf("got %v", err)
	}
	if reg.calls != 1 {
		t.Fatalf("registry asked %d times", reg.calls)
	}
	// Cached: the registry is not asked again for the same id.
	_ = c.Decode(ctx, []byte{0, 0, 0, 0, 7, 2, 'x'}, &out)
	if reg.calls != 1 {
		t.Fatalf("registry asked %d times after a cached answer", reg.calls)
	}
}

// codecFakeTextRegistry answers every id with the same text; it exists to
// hand the codec a writer schema no real registry would accept.
type codecFakeTextRegistry struct {
	text  string
	calls int
}

func (r *codecFakeTextRegistry) Register(context.Context, string, string) (int, error) {
	return 7, nil
}

func (r *codecFakeTextRegistry) Schema(context.Context, int) (string, error) {
	r.calls++
	return r.text, nil
}

const codecLogicalSchema = `{
  "type": "record", "name": "Payment", "namespace": "acemq.test",
  "fields": [
    {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "at_micros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "on", "type": {"type": "int", "logicalType": "date"}},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
    {"name": "note", "type": ["null", "string"], "default": null},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["CARD", "CASH"]}}
  ]
}`

type codecPayment struct {
	ID       string    `avro:"id"`
	At       time.Time `avro:"at"`
	AtMicros time.Time `avro:"at_micros"`
	On       time.Time `avro:"on"`
	Amount   *big.Rat  `avro:"amount"`
	Note     *string   `avro:"note"`
	Tags     []string  `avro:"tags"`
	Kind     string    `avro:"kind"`
}

func codecLogicalValue() codecPayment {
	note := "first"
	return codecPayment{
		ID:       "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f",
		At:       time.Date(2026, 11, 30, 6, 15, 42, 123_000_000, time.UTC),
		AtMicros: time.Date(2026, 11, 30, 6, 15, 42, 123_456_000, time.UTC),
		On:       time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
		Amount:   big.NewRat(123456, 100), // 1234.56
		Note:     &note,
		Tags:     []string{"a", "b"},
		Kind:     "CASH",
	}
}

func TestAvroCodecLogicalTypes(t *testing.T) {
	ctx := context.Background()
	c := codecMustAvro(t, schemareg.NewMemory(), "payments", codecLogicalSchema)
	in := codecLogicalValue()
	body, err := c.Encode(ctx, in)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	var out codecPayment
	if err := c.Decode(ctx, body, &out); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if out.ID != in.ID || !out.At.Equal(in.At) || !out.AtMicros.Equal(in.AtMicros) || !out.On.Equal(in.On) ||
		out.Amount == nil || out.Amount.Cmp(in.Amount) != 0 || out.Note == nil || *out.Note != "first" ||
		strings.Join(out.Tags, ",") != "a,b" || out.Kind != "CASH" {
		t.Fatalf("round trip\n got  %+v\n want %+v", out, in)
	}
	if out.Amount.FloatString(2) != "1234.56" {
		t.Fatalf("amount %s", out.Amount.FloatString(2))
	}
	// timestamp-millis keeps milliseconds only.
	in.At = in.At.Add(999 * time.Microsecond)
	body, err = c.Encode(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Decode(ctx, body, &out); err != nil || out.At.Nanosecond() != 123_000_000 {
		t.Fatalf("millis precision: %v %v", out.At, err)
	}
	// An enum symbol the schema does not have is refused on publish.
	in.Kind = "CHEQUE"
	if _, err := c.Encode(ctx, in); !errors.Is(err, core.ErrInvalidMessage) {
		t.Fatalf("unknown enum symbol: %v", err)
	}
}

func TestAvroCodecDecodeContext(t *testing.T) {
	ctx := context.Background()
	reg := schemareg.NewMemory()
	w := codecMustAvro(t, reg, "orders", codecOrderV1)
	r := codecMustAvro(t, reg, "orders", codecOrderV2)
	body, err := w.Encode(ctx, codecOrderV1Go{ID: "A-1"})
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	var out codecOrderV2Go
	// An uncached writer id needs the registry: the cancelled ctx stops it,
	// and the failure is not cached.
	if err := r.Decode(cancelled, body, &out); !errors.Is(err, context.Canceled) {
		t.Fatalf("lookup under a cancelled ctx: %v", err)
	}
	if err := r.Decode(ctx, body, &out); err != nil || out.Currency != "EUR" {
		t.Fatalf("after a cancelled lookup: %+v, %v", out, err)
	}
	// A cached id needs no registry call, so ctx no longer matters.
	if err := r.Decode(cancelled, body, &out); err != nil {
		t.Fatalf("cached id under a cancelled ctx: %v", err)
	}
}
