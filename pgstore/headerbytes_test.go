package pgstore_test

// The outbox keeps header bytes (issue 36, item 3): a message relayed
// from the outbox carries every header exactly as Publish would have sent
// it, for every field type amqp091-go writes: binary strings (not UTF-8,
// with NULs), byte slices, nested tables and arrays, decimals, timestamps,
// every integer and float width, booleans, nil; and header names that are
// not UTF-8. Before, the headers went through encoding/json into jsonb:
// "\xff\xfesig\x80" came out as 12 bytes with U+FFFD, and a NUL made
// PublishTx fail.

import (
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"maps"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/pgstore"
	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

// everyType is a header of every field type amqp091-go writes.
func everyType() map[string]any {
	return map[string]any{
		"sig":          "\xff\xfesig\x80",
		"nul":          "a\x00b",
		"empty":        "",
		"bytes":        []byte{0, 0xff, 0xfe, 0x80},
		"no-bytes":     []byte{},
		"u8":           byte(200),
		"i8":           int8(-8),
		"i16":          int16(-16000),
		"u16":          uint16(65535),
		"int":          int(-7),
		"i32":          int32(math.MinInt32),
		"u32":          uint32(math.MaxUint32),
		"i64":          int64(math.MinInt64),
		"f32":          float32(1.1),
		"f64":          math.Pi,
		"f64-tiny":     math.SmallestNonzeroFloat64,
		"f64-neg-zero": math.Copysign(0, -1),
		"dec":          amqp.Decimal{Scale: 3, Value: -31415},
		"ts":           time.Date(2026, 12, 7, 5, 4, 3, 0, time.UTC),
		"true":         true,
		"false":        false,
		"nil":          nil,
		"name\xff\x00": "a name that is not UTF-8",
		"table": amqp.Table{"inner": amqp.Table{"deep\x00": "x\xff", "n": int64(1) << 40},
			"\xffkey": int16(1), "list": []any{uint16(2), nil}},
		"array": []any{"a\xff\x00", int32(1), []any{amqp.Table{"k": nil}, float32(-2.5)}, []byte("b"),
			amqp.Decimal{Scale: 0, Value: 1}, time.Unix(0, 0).UTC(), false},
		"empty-table": amqp.Table{},
		"empty-array": []any{},
	}
}

// TestRelayedHeadersAreByteForByte: the headers of every type, published
// directly and through the outbox, read back from the queue: equal value
// for value (amqp091-go reads equal values from equal bytes).
func TestRelayedHeadersAreByteForByte(t *testing.T) {
	e := newOutboxEnv(t, "outbox_bytes")
	ctx := ctxFor(t, 60*time.Second)
	headers := everyType()
	if err := runtime.Publish(ctx, e.c, eventType, "", event{Key: "k", Seq: 1}, runtime.WithRoutingKey(e.queue),
		runtime.WithHeaders(headers)); err != nil {
		t.Fatal(err)
	}
	direct := e.receive(1, 20*time.Second)[0]
	e.write(ctx, event{Key: "k", Seq: 1}, runtime.WithHeaders(headers))
	e.relay()
	relayed := e.receive(1, 20*time.Second)[0]
	own := map[string]bool{wire.HeaderID: true, wire.HeaderFirstSeen: true, "traceparent": true, "tracestate": true}
	for k := range headers {
		if !reflect.DeepEqual(relayed.Headers[k], direct.Headers[k]) {
			t.Errorf("header %q: relayed %#v, published %#v", k, relayed.Headers[k], direct.Headers[k])
		}
	}
	for k := range direct.Headers {
		if _, ok := relayed.Headers[k]; !ok && !own[k] {
			t.Errorf("header %q published, not relayed", k)
		}
	}
	for k := range relayed.Headers {
		if _, ok := direct.Headers[k]; !ok && !own[k] {
			t.Errorf("header %q relayed, not published", k)
		}
	}
	if got := relayed.Headers["sig"]; got != "\xff\xfesig\x80" {
		t.Errorf("sig: relayed %q (%d bytes), want the 6 bytes written", got, len(fmt.Sprint(got)))
	}
	e.waitRows(ctx, 0, 20*time.Second)
}

// TestOutboxHeaderTableRoundTrip: on PostgreSQL alone, a row's headers
// read back by the relay's reader are the headers written, NaN and the
// infinities included (which the broker refuses, so the broker test
// leaves them out), bit for bit.
func TestOutboxHeaderTableRoundTrip(t *testing.T) {
	e := newOutboxEnv(t, "outbox_table")
	ctx := ctxFor(t, 30*time.Second)
	headers := everyType()
	headers["nan"] = math.Float64frombits(0x7ff8000000000001)
	headers["inf32"] = float32(math.Inf(-1))
	headers["inf"] = math.Inf(1)
	e.write(ctx, event{Key: "k", Seq: 1}, runtime.WithHeaders(headers))
	got, err := pgstore.RowHeadersForTest(ctx, e.pool, e.ob)
	if err != nil {
		t.Fatal(err)
	}
	keys := slicesSorted(maps.Keys(headers))
	for _, k := range keys {
		if want := wireForm(headers[k]); wireForm(got[k]) != want {
			t.Errorf("header %q: read back %#v, wrote %#v", k, got[k], headers[k])
		}
	}
	if got[wire.HeaderID] == nil {
		t.Errorf("x-acemq-id not read back: %v", got)
	}
}

// wireForm is how amqp091-go writes v, as a comparable string: the Go type it
// reads back and its bits.
func wireForm(v any) string {
	switch x := v.(type) {
	case int:
		return wireForm(int32(x))
	case float32:
		return fmt.Sprintf("f32:%08x", math.Float32bits(x))
	case float64:
		return fmt.Sprintf("f64:%016x", math.Float64bits(x))
	case time.Time:
		return fmt.Sprintf("T:%d", x.Unix())
	case amqp.Table:
		var b strings.Builder
		b.WriteString("F{")
		for _, k := range slicesSorted(maps.Keys(x)) {
			fmt.Fprintf(&b, "%q:%s,", k, wireForm(x[k]))
		}
		return b.String() + "}"
	case []any:
		var b strings.Builder
		b.WriteString("A[")
		for _, e := range x {
			b.WriteString(wireForm(e) + ",")
		}
		return b.String() + "]"
	}
	return fmt.Sprintf("%T:%#v", v, v)
}

func slicesSorted(seq func(func(string) bool)) []string {
	var out []string
	for k := range seq {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
