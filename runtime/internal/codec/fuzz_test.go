package codec

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/internal/schemareg"
)

// The fuzz targets of the decode paths. Their seed corpora run in every
// go test (make test); make fuzz runs each for a minute. A codec turns a
// panic into an error ("…: panic: …"), so a panic the fuzzer finds shows as
// that error, which each target fails on: a panic found is a test case.

func fuzzNoPanic(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), ": panic: ") {
		t.Fatalf("a panic, recovered into an error: %v", err)
	}
	if err != nil && err.Error() == "" {
		t.Fatalf("an error with no text: %#v", err)
	}
}

// FuzzJSONDecode: any body against the order schema (formats, patterns,
// nested arrays) is a value or an error, never a panic; a value that
// decodes encodes again.
func FuzzJSONDecode(f *testing.F) {
	valid, err := json.Marshal(codecValidOrder())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte(`{"id":"x"}`))
	f.Add([]byte(`{`))
	f.Add([]byte(``))
	f.Add([]byte(`[1,2,3]`))
	f.Add([]byte(`{"items":[{"qty":"1"}],"placed_at":"2026-13-30T06:00:00Z"}`))
	f.Add([]byte(`"\ud800"`))
	f.Add([]byte(strings.Repeat("[", 10000)))
	c, err := NewJSONCodec(codecOrderSchema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v codecOrder
		err := c.Decode(context.Background(), body, &v)
		fuzzNoPanic(t, err)
		if err == nil {
			_, err := c.Encode(context.Background(), v)
			fuzzNoPanic(t, err)
		}
	})
}

// FuzzAvroDecode: any body, with or without a fingerprint header, under
// any body limit, read by a v2 reader over a registry holding v1, v2, the
// logical-types schema and the contract schema: a value or an error, never
// a panic.
func FuzzAvroDecode(f *testing.F) {
	ctx := context.Background()
	reg := schemareg.NewMemory()
	v1 := codecMustAvro(f, reg, "orders", codecOrderV1)
	v2 := codecMustAvro(f, reg, "orders", codecOrderV2)
	pay := codecMustAvro(f, reg, "payments", codecLogicalSchema)
	con := codecMustAvro(f, reg, "contract", codecContractAvroSchema)
	for _, seed := range []struct {
		c msgtype.Codec
		v any
	}{
		{v1, codecOrderV1Go{ID: "A-1"}},
		{v2, codecOrderV2Go{ID: "A-2", Currency: "USD"}},
		{pay, codecLogicalValue()},
		{con, codecContractRecord{ID: "c", Count: 2, Tags: []string{"a", "b"}}},
	} {
		body, err := seed.c.Encode(ctx, seed.v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, uint8(0), uint16(0))
		f.Add(body, uint8(1), uint16(3))
		f.Add(body[:len(body)-1], uint8(2), uint16(0))
	}
	f.Add([]byte{0, 0, 0, 0, 1, 0xfe, 0xff, 0xff, 0xff, 0x0f}, uint8(0), uint16(0)) // a forged string length
	f.Add([]byte{0, 0, 0, 0, 4, 0xfe, 0xff, 0xff, 0xff, 0x0f}, uint8(0), uint16(0)) // a forged array length
	f.Add([]byte{0, 0x7f, 0xff, 0xff, 0xff}, uint8(0), uint16(0))
	f.Add([]byte{}, uint8(0), uint16(0))
	prints := []string{"", v1.(*avroCodec).SchemaFingerprint(), v2.(*avroCodec).SchemaFingerprint(), "sha256:garbage"}
	targets := []func() any{
		func() any { return new(codecOrderV2Go) },
		func() any { return new(codecPayment) },
		func() any { return new(codecContractRecord) },
		func() any { return new(map[string]any) },
	}
	readers := []msgtype.Codec{v2, pay, con, v1}
	f.Fuzz(func(t *testing.T, body []byte, which uint8, limit uint16) {
		i := int(which) % len(readers)
		info := core.DecodeInfo{Fingerprint: prints[int(which>>2)%len(prints)], MaxBody: int(limit)}
		err := readers[i].Decode(core.WithDecodeInfo(ctx, info), body, targets[i]())
		fuzzNoPanic(t, err)
	})
}

// FuzzConfluentHeader: the header is read exactly as the wire format says
// (magic byte 0x00, 4-byte big-endian id), and anything else is an error.
func FuzzConfluentHeader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1})
	f.Add([]byte{0, 0x7f, 0xff, 0xff, 0xff, 1, 2})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{1, 0, 0, 0, 1})
	f.Add([]byte{0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		id, err := confluentID(body)
		switch {
		case len(body) < avroHeaderLen || body[0] != 0:
			if err == nil {
				t.Fatalf("% x: id %d, want an error", body, id)
			}
			if !strings.HasPrefix(err.Error(), "not in the Confluent wire format: ") {
				t.Fatalf("% x: %v", body, err)
			}
		case err != nil:
			t.Fatalf("% x: %v", body, err)
		case id != int(binary.BigEndian.Uint32(body[1:5])):
			t.Fatalf("% x: id %d", body, id)
		}
	})
}
