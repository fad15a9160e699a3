package codec

// The shared contracts, Watermill style: one behavioural suite that every
// Codec passes, and one that every SchemaRegistry passes. A new codec or
// registry (the file and HTTP registries to come) joins by adding a row to
// codecContractCodecs or codecContractRegistries.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/internal/schemareg"
)

// codecContractCodec is one codec under the shared suite.
type codecContractCodec struct {
	name        string
	contentType string
	// newCodec returns a fresh codec (with a fresh registry, if it needs one).
	newCodec func(t testing.TB) msgtype.Codec
	// value is a valid message; newTarget a pointer to decode it into;
	// got reads the decoded value back out of that pointer.
	value     any
	newTarget func() any
	got       func(target any) any
	// garbage are bodies Decode must refuse; badValues values Encode must.
	garbage   [][]byte
	badValues []any
}

type codecContractRecord struct {
	ID    string   `json:"id" avro:"id"`
	Count int      `json:"count" avro:"count"`
	Tags  []string `json:"tags" avro:"tags"`
}

const (
	codecContractJSONSchema = `{"type":"object","required":["id","count","tags"],"properties":{
		"id":{"type":"string","minLength":1},"count":{"type":"integer","minimum":0},
		"tags":{"type":"array","items":{"type":"string"}}}}`
	codecContractAvroSchema = `{"type":"record","name":"Contract","fields":[
		{"name":"id","type":"string"},{"name":"count","type":"int"},
		{"name":"tags","type":{"type":"array","items":"string"}}]}`
)

func codecContractCodecs() []codecContractCodec {
	record := codecContractRecord{ID: "A-1", Count: 3, Tags: []string{"x", "y"}}
	newRecord := func() any { return new(codecContractRecord) }
	gotRecord := func(p any) any { return *p.(*codecContractRecord) }
	return []codecContractCodec{
		{
			name:        "text",
			contentType: wire.ContentTypeText,
			newCodec:    func(testing.TB) msgtype.Codec { return NewTextCodec() },
			value:       "hello, world",
			newTarget:   func() any { return new(string) },
			got:         func(p any) any { return *p.(*string) },
			badValues:   []any{42, map[string]any{}, nil},
		},
		{
			name:        "json",
			contentType: wire.ContentTypeJSON,
			newCodec:    func(t testing.TB) msgtype.Codec { return codecMustJSON(t, codecContractJSONSchema) },
			value:       record,
			newTarget:   newRecord,
			got:         gotRecord,
			garbage: [][]byte{nil, []byte("this is not JSON"), []byte(`{"id":"A-1"`), []byte(`{"id":""}`),
				[]byte(`{"id":"A-1","count":-1,"tags":[]}`), []byte("\xff\xfe"), []byte("[]")},
			badValues: []any{codecContractRecord{Count: 1}, make(chan int), map[string]any{"id": 1}},
		},
		{
			name:        "avro",
			contentType: wire.ContentTypeAvro,
			newCodec: func(t testing.TB) msgtype.Codec {
				return codecMustAvro(t, schemareg.NewMemory(), "contract", codecContractAvroSchema)
			},
			value:     record,
			newTarget: newRecord,
			got:       gotRecord,
			garbage: [][]byte{nil, []byte("this is not Avro"), {0}, {0, 0, 0, 0}, {1, 0, 0, 0, 1, 2, 'x'},
				{0, 0, 0, 0, 9, 2, 'x'}, {0, 0, 0, 0, 1}, {0, 0, 0, 0, 1, 2, 'x'}},
			badValues: []any{"a string", 42, map[string]any{"id": 1}, nil},
		},
	}
}

func TestCodecContract(t *testing.T) {
	for _, cc := range codecContractCodecs() {
		t.Run(cc.name, func(t *testing.T) {
			t.Run("ContentType", func(t *testing.T) { codecContractContentType(t, cc) })
			t.Run("RoundTrip", func(t *testing.T) { codecContractRoundTrip(t, cc) })
			t.Run("Deterministic", func(t *testing.T) { codecContractDeterministic(t, cc) })
			t.Run("GarbageIsAnError", func(t *testing.T) { codecContractGarbage(t, cc) })
			t.Run("NoPanicOnAnyBody", func(t *testing.T) { codecContractNoPanic(t, cc) })
			t.Run("BadTargets", func(t *testing.T) { codecContractBadTargets(t, cc) })
			t.Run("BadValues", func(t *testing.T) { codecContractBadValues(t, cc) })
			t.Run("Concurrent", func(t *testing.T) { codecContractConcurrent(t, cc) })
		})
	}
}

func codecContractContentType(t *testing.T, cc codecContractCodec) {
	if got := cc.newCodec(t).ContentType(); got != cc.contentType {
		t.Fatalf("ContentType() = %q, want %q", got, cc.contentType)
	}
}

func codecContractRoundTrip(t *testing.T, cc codecContractCodec) {
	ctx := context.Background()
	c := cc.newCodec(t)
	body, err := c.Encode(ctx, cc.value)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	target := cc.newTarget()
	if err := c.Decode(ctx, body, target); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if got := cc.got(target); !reflect.DeepEqual(got, cc.value) {
		t.Fatalf("round trip: got %#v, want %#v", got, cc.value)
	}
	// A second codec of the same kind reads what the first wrote (for Avro
	// this needs the shared registry, so it reuses the first codec).
	if err := c.Decode(ctx, body, cc.newTarget()); err != nil {
		t.Fatalf("second Decode: %v", err)
	}
}

func codecContractDeterministic(t *testing.T, cc codecContractCodec) {
	ctx := context.Background()
	c := cc.newCodec(t)
	a, errA := c.Encode(ctx, cc.value)
	b, errB := c.Encode(ctx, cc.value)
	if errA != nil || errB != nil || string(a) != string(b) {
		t.Fatalf("same value, different bodies: %q (%v) vs %q (%v)", a, errA, b, errB)
	}
}

func codecContractGarbage(t *testing.T, cc codecContractCodec) {
	c := cc.newCodec(t)
	// Registers the schema, so garbage with a known id reaches the decoder.
	if _, err := c.Encode(context.Background(), cc.value); err != nil {
		t.Fatal(err)
	}
	for _, body := range cc.garbage {
		target := cc.newTarget()
		if err := codecSafeDecode(c, body, target); err == nil {
			t.Errorf("Decode(%q) = nil, decoded %#v", body, cc.got(target))
		}
	}
}

// codecSafeDecode turns a panic into a test-visible error.
func codecSafeDecode(c msgtype.Codec, body []byte, target any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	return c.Decode(context.Background(), body, target)
}

func codecContractNoPanic(t *testing.T, cc codecContractCodec) {
	c := cc.newCodec(t)
	good, err := c.Encode(context.Background(), cc.value)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	bodies := [][]byte{}
	for n := range len(good) { // every truncation of a valid body
		bodies = append(bodies, good[:n])
	}
	for range 500 { // random bodies, some with a valid header
		b := make([]byte, rng.IntN(64))
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		if len(b) >= 5 && rng.IntN(2) == 0 {
			copy(b, good[:5])
		}
		bodies = append(bodies, b)
	}
	for range 500 { // valid bodies with one byte flipped
		b := append([]byte(nil), good...)
		b[rng.IntN(len(b))] ^= byte(1 + rng.UintN(255))
		bodies = append(bodies, b)
	}
	for _, body := range bodies {
		if err := codecSafeDecode(c, body, cc.newTarget()); err != nil && strings.HasPrefix(err.Error(), "PANIC:") {
			t.Fatalf("Decode(% x) panicked: %v", body, err)
		}
	}
}

func codecContractBadTargets(t *testing.T, cc codecContractCodec) {
	c := cc.newCodec(t)
	body, err := c.Encode(context.Background(), cc.value)
	if err != nil {
		t.Fatal(err)
	}
	nonPointer := reflect.ValueOf(cc.newTarget()).Elem().Interface()
	for _, target := range []any{nil, nonPointer, new(chan int)} {
		if err := codecSafeDecode(c, body, target); err == nil {
			t.Errorf("Decode into %T = nil, want an error", target)
		} else if strings.HasPrefix(err.Error(), "PANIC:") {
			t.Errorf("Decode into %T panicked: %v", target, err)
		}
	}
}

func codecContractBadValues(t *testing.T, cc codecContractCodec) {
	c := cc.newCodec(t)
	for _, v := range cc.badValues {
		body, err := func() (b []byte, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("PANIC: %v", r)
					t.Errorf("Encode(%#v) panicked: %v", v, r)
				}
			}()
			return c.Encode(context.Background(), v)
		}()
		if err == nil {
			t.Errorf("Encode(%#v) = %q, want an error", v, body)
		}
	}
}

func codecContractConcurrent(t *testing.T, cc codecContractCodec) {
	ctx := context.Background()
	c := cc.newCodec(t) // fresh: the first Encodes race to register
	const workers, rounds = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range rounds {
				body, err := c.Encode(ctx, cc.value)
				if err != nil {
					errs <- err
					return
				}
				target := cc.newTarget()
				if err := c.Decode(ctx, body, target); err != nil {
					errs <- err
					return
				}
				if got := cc.got(target); !reflect.DeepEqual(got, cc.value) {
					errs <- fmt.Errorf("got %#v", got)
					return
				}
				_ = c.Decode(ctx, body[:len(body)/2], cc.newTarget())
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestCodecMessageTypeWiring checks the codecs through MessageType, the way
// generated code reaches them: a bad schema is an error naming the type
// (never a panic), and Avro codecs are kept per registry.
func TestCodecMessageTypeWiring(t *testing.T) {
	bad := msgtype.New[codecOrder]("order.placed.v1", msgtype.FormatJSON, "", `{"type": "thing"}`, nil, Codecs{})
	for range 2 { // the error is remembered, not recomputed into a panic
		if _, err := bad.Codec(nil); err == nil ||
			!strings.HasPrefix(err.Error(), `message type "order.placed.v1": JSON Schema does not compile`) {
			t.Fatalf("bad JSON schema: %v", err)
		}
	}
	badAvro := msgtype.New[codecOrderV1Go]("order.placed.v2", msgtype.FormatAvro, "orders", `{"type":"record"}`, nil, Codecs{})
	if _, err := badAvro.Codec(schemareg.NewMemory()); err == nil ||
		!strings.Contains(err.Error(), `message type "order.placed.v2": Avro schema does not parse`) {
		t.Fatalf("bad Avro schema: %v", err)
	}
	mt := msgtype.New[codecOrderV2Go]("order.placed.v2", msgtype.FormatAvro, "orders", codecOrderV2, nil, Codecs{})
	r1, r2 := schemareg.NewMemory(), schemareg.NewMemory()
	c1, err1 := mt.Codec(r1)
	c1again, _ := mt.Codec(r1)
	c2, err2 := mt.Codec(r2)
	if err1 != nil || err2 != nil || c1 != c1again || c1 == c2 {
		t.Fatalf("per-registry codecs: %v %v same=%v distinct=%v", err1, err2, c1 == c1again, c1 != c2)
	}
	text, err := msgtype.New[string]("note", msgtype.FormatText, "", "", nil, Codecs{}).Codec(nil)
	if err != nil || text.ContentType() != wire.ContentTypeText {
		t.Fatalf("text type: %v", err)
	}
}
