package runtime

// Benchmarks of the codecs against their bare baselines in the same run.
// Each BenchmarkX has the sub-benchmarks baseline=..., codec=... and ratio,
// which prints the codec's cost as a multiple of the baseline
// ("x-baseline"):
//
//	go test -run '^$' -bench 'JSON(En|De)code|Avro' -benchmem ./runtime/

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hamba/avro/v2"
)

// codecBenchSchema is a typical event schema: formats, a nested array, an
// enum, required and optional fields.
const codecBenchSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["id", "customer_id", "placed_at", "status", "items", "total"],
  "properties": {
    "id": {"type": "string", "format": "uuid"},
    "customer_id": {"type": "string", "minLength": 1},
    "email": {"type": "string", "format": "email"},
    "placed_at": {"type": "string", "format": "date-time"},
    "status": {"enum": ["placed", "paid", "shipped"]},
    "total": {"type": "number", "minimum": 0},
    "items": {"type": "array", "minItems": 1, "items": {
      "type": "object", "required": ["sku", "qty", "price"],
      "properties": {
        "sku": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$"},
        "qty": {"type": "integer", "minimum": 1},
        "price": {"type": "number", "minimum": 0}
      }
    }}
  }
}`

type codecBenchItem struct {
	SKU   string  `json:"sku" avro:"sku"`
	Qty   int     `json:"qty" avro:"qty"`
	Price float64 `json:"price" avro:"price"`
}

type codecBenchOrder struct {
	ID         string           `json:"id" avro:"id"`
	CustomerID string           `json:"customer_id" avro:"customer_id"`
	Email      string           `json:"email,omitempty" avro:"email"`
	PlacedAt   string           `json:"placed_at" avro:"placed_at"`
	Status     string           `json:"status" avro:"status"`
	Total      float64          `json:"total" avro:"total"`
	Items      []codecBenchItem `json:"items" avro:"items"`
}

func codecBenchValue() codecBenchOrder {
	return codecBenchOrder{
		ID: "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f", CustomerID: "C-42", Email: "ada@example.com",
		PlacedAt: "2026-11-30T06:00:00.123Z", Status: "placed", Total: 61.5,
		Items: []codecBenchItem{{"ABC-1", 2, 10.25}, {"DEF-22", 1, 30}, {"GHI-333", 4, 2.75}},
	}
}

func BenchmarkJSONEncode(b *testing.B) {
	codecBenchPair(b, "baseline=json.Marshal", codecBenchJSONMarshal, "codec=validated", codecBenchJSONEncode)
}

func BenchmarkJSONDecode(b *testing.B) {
	codecBenchPair(b, "baseline=json.Unmarshal", codecBenchJSONUnmarshal, "codec=validated", codecBenchJSONDecode)
}

func BenchmarkAvroEncode(b *testing.B) {
	codecBenchPair(b, "baseline=avro.Marshal", codecBenchAvroMarshal, "codec=confluent", codecBenchAvroEncode)
}

func BenchmarkAvroDecode(b *testing.B) {
	codecBenchPair(b, "baseline=avro.Unmarshal", codecBenchAvroUnmarshal, "codec=confluent", codecBenchAvroDecode)
}

// BenchmarkAvroDecodeResolved decodes a body written with an older schema
// (the reader adds a defaulted field), so every decode goes through the
// resolved schema.
func BenchmarkAvroDecodeResolved(b *testing.B) {
	codecBenchPair(b, "baseline=avro.Unmarshal", codecBenchAvroUnmarshal, "codec=resolved", codecBenchAvroDecodeResolved)
}

// codecBenchPair runs the baseline and the codec as sub-benchmarks of b,
// then a third, "ratio", that reports the codec's time per message as a
// multiple of the baseline's measured in this same run ("x-baseline").
// (testing.Benchmark cannot be called from inside a benchmark: it waits on
// the lock the running benchmark holds.)
func codecBenchPair(b *testing.B, baseName string, base func(*testing.B), codecName string, codec func(*testing.B)) {
	var baseNs, codecNs float64
	b.Run(baseName, codecBenchTimed(&baseNs, base))
	b.Run(codecName, codecBenchTimed(&codecNs, codec))
	b.Run("ratio", func(b *testing.B) {
		if baseNs == 0 || codecNs == 0 {
			b.Skip("run the baseline and the codec in the same run (-bench without a sub-benchmark filter)")
		}
		b.ReportMetric(codecNs/baseNs, "x-baseline")
		b.ReportMetric(baseNs, "baseline-ns/msg")
		b.ReportMetric(codecNs, "codec-ns/msg")
		b.ReportMetric(0, "ns/op") // the ratio's own loop is empty
	})
}

// codecBenchTimed wraps f to record its time per iteration in *ns; the
// framework calls f with a growing b.N, and the last call is the result.
func codecBenchTimed(ns *float64, f func(*testing.B)) func(*testing.B) {
	return func(b *testing.B) {
		f(b)
		if b.N > 0 {
			*ns = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		}
	}
}

func codecBenchJSONMarshal(b *testing.B) {
	v := codecBenchValue()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

func codecBenchJSONEncode(b *testing.B) {
	codecBenchEncodeWith(b, codecMustJSON(b, codecBenchSchema))
}

// codecBenchEncodeWith times c.Encode of the benchmark value.
func codecBenchEncodeWith(b *testing.B, c Codec) {
	ctx := context.Background()
	v := codecBenchValue()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Encode(ctx, v); err != nil {
			b.Fatal(err)
		}
	}
}

func codecBenchJSONUnmarshal(b *testing.B) {
	body, _ := json.Marshal(codecBenchValue())
	b.ReportAllocs()
	for b.Loop() {
		var v codecBenchOrder
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func codecBenchJSONDecode(b *testing.B) {
	c := codecMustJSON(b, codecBenchSchema)
	codecBenchDecodeWith(b, c, c)
}

const codecBenchAvroSchema = `{"type":"record","name":"Order","fields":[
  {"name":"id","type":{"type":"string","logicalType":"uuid"}},
  {"name":"customer_id","type":"string"},
  {"name":"email","type":"string"},
  {"name":"placed_at","type":"string"},
  {"name":"status","type":{"type":"enum","name":"Status","symbols":["placed","paid","shipped"]}},
  {"name":"total","type":"double"},
  {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
    {"name":"sku","type":"string"},{"name":"qty","type":"int"},{"name":"price","type":"double"}]}}}
]}`

// codecBenchAvroReader adds a defaulted field, so a body written with
// codecBenchAvroSchema needs resolution.
const codecBenchAvroReader = `{"type":"record","name":"Order","fields":[
  {"name":"id","type":{"type":"string","logicalType":"uuid"}},
  {"name":"customer_id","type":"string"},
  {"name":"email","type":"string"},
  {"name":"placed_at","type":"string"},
  {"name":"status","type":{"type":"enum","name":"Status","symbols":["placed","paid","shipped"]}},
  {"name":"total","type":"double"},
  {"name":"currency","type":"string","default":"EUR"},
  {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
    {"name":"sku","type":"string"},{"name":"qty","type":"int"},{"name":"price","type":"double"}]}}}
]}`

func codecBenchAvroMarshal(b *testing.B) {
	s := avro.MustParse(codecBenchAvroSchema)
	v := codecBenchValue()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := avro.Marshal(s, v); err != nil {
			b.Fatal(err)
		}
	}
}

func codecBenchAvroEncode(b *testing.B) {
	codecBenchEncodeWith(b, codecMustAvro(b, NewMemoryRegistry(), "orders", codecBenchAvroSchema))
}

func codecBenchAvroUnmarshal(b *testing.B) {
	s := avro.MustParse(codecBenchAvroSchema)
	data, err := avro.Marshal(s, codecBenchValue())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var v codecBenchOrder
		if err := avro.Unmarshal(s, data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func codecBenchAvroDecode(b *testing.B) {
	c := codecMustAvro(b, NewMemoryRegistry(), "orders", codecBenchAvroSchema)
	codecBenchDecodeWith(b, c, c)
}

func codecBenchAvroDecodeResolved(b *testing.B) {
	reg := NewMemoryRegistry()
	w := codecMustAvro(b, reg, "orders", codecBenchAvroSchema)
	r := codecMustAvro(b, reg, "orders", codecBenchAvroReader)
	codecBenchDecodeWith(b, w, r)
}

// codecBenchDecodeWith times r.Decode of the benchmark value as w encodes it.
func codecBenchDecodeWith(b *testing.B, w, r Codec) {
	ctx := context.Background()
	body, err := w.Encode(ctx, codecBenchValue())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var v codecBenchOrder
		if err := r.Decode(ctx, body, &v); err != nil {
			b.Fatal(err)
		}
	}
}
