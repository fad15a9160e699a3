package codec

// Benchmarks of the codecs against their bare baselines on the same
// struct (issue 14's K1–K3). Each BenchmarkX has the sub-benchmarks
// baseline=... and codec=... (benchstat-ready, allocations reported), and
// a third, ratio, that times the two interleaved — baseline, codec,
// codec, baseline … in 21 pairs of 10 ms a side — and reports the median
// of the pairs' ratios as x-baseline, with their spread (x-min, x-max): on
// a shared, noisy machine only a ratio measured side by side means
// anything.
//
//	go test -run '^$' -bench 'JSON(En|De)code|Avro' -benchmem ./runtime/
//
// With -count 10, benchstat compares the two sides' sub-benchmarks
// (benchstat -col /codec -ignore /baseline) and summarises the ratios
// (benchstat -filter .fullname:/ratio/).
//
// Targets (issue 14): Avro encode and decode within 1.10x of bare hamba
// (K1), JSON encode+validate within 2x of json.Marshal (K2), JSON
// decode+validate within 2x of json.Unmarshal (K3).

import (
	"context"
	"encoding/json"
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/internal/schemareg"
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

// codecBenchOp prepares one side of a benchmark and returns one iteration
// of it; an iteration that fails calls b.Fatal.
type codecBenchOp func(b *testing.B) func()

// codecBenchPairs is how many interleaved pairs the ratio times, and
// codecBenchSlice how long each side of a pair runs: many short pairs, so
// that the other processes of a shared machine fall on both sides alike
// (go test ... -args -codecbench.pairs 41 -codecbench.slice 5ms).
var (
	codecBenchPairs = flag.Int("codecbench.pairs", 21, "interleaved pairs per ratio sub-benchmark")
	codecBenchSlice = flag.Duration("codecbench.slice", 10*time.Millisecond, "how long each side of a ratio's pair runs")
)

// codecBenchPair runs the baseline and the codec as sub-benchmarks of b,
// then "ratio": codecBenchPairs pairs, each the baseline and the codec for
// about codecBenchSlice, alternately baseline first and codec first (so
// neither side always follows the other's garbage), reporting the median
// of codec/baseline per message ("x-baseline") and the pairs' min and max.
// (testing.Benchmark cannot be called from inside a benchmark: it waits on
// the lock the running benchmark holds; so the ratio times its own loops.)
func codecBenchPair(b *testing.B, baseName string, base codecBenchOp, codecName string, codec codecBenchOp) {
	b.Run(baseName, codecBenchLoop(base))
	b.Run(codecName, codecBenchLoop(codec))
	b.Run("ratio", func(b *testing.B) {
		baseOp, codecOp := base(b), codec(b)
		// Enough iterations for a slice of codecBenchSlice, from a
		// first estimate of the slower side (a warm-up, then a tenth of
		// a slice's worth).
		pairs, slice := max(1, *codecBenchPairs), *codecBenchSlice
		est := max(codecBenchTime(codecOp, 10)/10, time.Nanosecond)
		m := max(10, int(slice/10/est))
		est = max(codecBenchTime(codecOp, m)/time.Duration(m), time.Nanosecond)
		n := max(1, int(slice/est))
		ratios := make([]float64, 0, pairs)
		var baseSum, codecSum time.Duration
		for i := range pairs {
			var bt, ct time.Duration
			if i%2 == 0 {
				bt, ct = codecBenchTime(baseOp, n), codecBenchTime(codecOp, n)
			} else {
				ct, bt = codecBenchTime(codecOp, n), codecBenchTime(baseOp, n)
			}
			baseSum, codecSum = baseSum+bt, codecSum+ct
			ratios = append(ratios, float64(ct)/float64(bt))
		}
		slices.Sort(ratios)
		for b.Loop() { // the ratio's own loop is empty
		}
		b.ReportMetric(ratios[len(ratios)/2], "x-baseline")
		b.ReportMetric(ratios[0], "x-min")
		b.ReportMetric(ratios[len(ratios)-1], "x-max")
		b.ReportMetric(float64(baseSum.Nanoseconds())/float64(n*pairs), "baseline-ns/msg")
		b.ReportMetric(float64(codecSum.Nanoseconds())/float64(n*pairs), "codec-ns/msg")
		b.ReportMetric(0, "ns/op")
	})
}

// codecBenchLoop is op as a benchmark of its own, allocations reported.
func codecBenchLoop(op codecBenchOp) func(*testing.B) {
	return func(b *testing.B) {
		f := op(b)
		b.ReportAllocs()
		for b.Loop() {
			f()
		}
	}
}

// codecBenchTime is how long n iterations of f take.
func codecBenchTime(f func(), n int) time.Duration {
	start := time.Now()
	for range n {
		f()
	}
	return time.Since(start)
}

func codecBenchJSONMarshal(b *testing.B) func() {
	v := codecBenchValue()
	return func() {
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

func codecBenchJSONEncode(b *testing.B) func() {
	return codecBenchEncodeWith(b, codecMustJSON(b, codecBenchSchema))
}

// codecBenchEncodeWith is one c.Encode of the benchmark value.
func codecBenchEncodeWith(b *testing.B, c msgtype.Codec) func() {
	ctx := context.Background()
	v := codecBenchValue()
	return func() {
		if _, err := c.Encode(ctx, v); err != nil {
			b.Fatal(err)
		}
	}
}

func codecBenchJSONUnmarshal(b *testing.B) func() {
	body, _ := json.Marshal(codecBenchValue())
	return func() {
		var v codecBenchOrder
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func codecBenchJSONDecode(b *testing.B) func() {
	c := codecMustJSON(b, codecBenchSchema)
	return codecBenchDecodeWith(b, c, c)
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

// The Avro baselines are hamba's Marshal and Unmarshal under the codec's
// own configuration (avroEncodeConfig; avroDecodeConfig at the default
// body limit), frozen apart so that neither side warms the other's caches
// or pools: the same struct, schema and hamba configuration on both sides.

func codecBenchAvroMarshal(b *testing.B) func() {
	api := avroEncodeConfig.Freeze()
	s := avro.MustParse(codecBenchAvroSchema)
	v := codecBenchValue()
	return func() {
		if _, err := api.Marshal(s, v); err != nil {
			b.Fatal(err)
		}
	}
}

func codecBenchAvroEncode(b *testing.B) func() {
	return codecBenchEncodeWith(b, codecMustAvro(b, schemareg.NewMemory(), "orders", codecBenchAvroSchema))
}

func codecBenchAvroUnmarshal(b *testing.B) func() {
	api := avroDecodeConfig(core.DefaultMaxBodySize).Freeze()
	s := avro.MustParse(codecBenchAvroSchema)
	data, err := avroEncodeConfig.Freeze().Marshal(s, codecBenchValue())
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		var v codecBenchOrder
		if err := api.Unmarshal(s, data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func codecBenchAvroDecode(b *testing.B) func() {
	c := codecMustAvro(b, schemareg.NewMemory(), "orders", codecBenchAvroSchema)
	return codecBenchDecodeWith(b, c, c)
}

func codecBenchAvroDecodeResolved(b *testing.B) func() {
	reg := schemareg.NewMemory()
	w := codecMustAvro(b, reg, "orders", codecBenchAvroSchema)
	r := codecMustAvro(b, reg, "orders", codecBenchAvroReader)
	return codecBenchDecodeWith(b, w, r)
}

// codecBenchDecodeWith is one r.Decode of the benchmark value as w encodes it.
func codecBenchDecodeWith(b *testing.B, w, r msgtype.Codec) func() {
	ctx := context.Background()
	body, err := w.Encode(ctx, codecBenchValue())
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		var v codecBenchOrder
		if err := r.Decode(ctx, body, &v); err != nil {
			b.Fatal(err)
		}
	}
}
