package codec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/internal/schemareg"
)

// Two processes each with a registry numbering from 1: the publisher's id 1
// is Order v1, the consumer's id 1 is another schema. The fingerprint header
// tells them apart: the body is refused, never decoded with the wrong
// schema, and the reason names the id and both fingerprints.
func TestAvroCodecAnIDThatMeansAnotherSchemaNeverDecodes(t *testing.T) {
	ctx := context.Background()
	pubReg, subReg := schemareg.NewMemory(), schemareg.NewMemory()
	// Same record name and a field of the same name and type: hamba's name
	// check alone would decode it.
	other := `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"note","type":"string"}]}`
	if id, _ := subReg.Register(ctx, "other", other); id != 1 {
		t.Fatalf("setup: id %d", id)
	}
	pub := codecMustAvro(t, pubReg, "orders", codecOrderV1)
	sub := codecMustAvro(t, subReg, "orders", codecOrderV2)
	body, err := pub.Encode(ctx, codecOrderV1Go{ID: "A-1"})
	if err != nil {
		t.Fatal(err)
	}
	fp := pub.(*avroCodec).SchemaFingerprint()
	var got codecOrderV2Go
	err = sub.Decode(core.WithDecodeInfo(ctx, core.DecodeInfo{Fingerprint: fp}), body, &got)
	otherFP, _ := SchemaFingerprint(other)
	want := fmt.Sprintf("writer schema 1: acemq: the registry's schema is not the writer's: the registry's schema 1 has fingerprint %s, the message's x-acemq-schema-fingerprint header says %s", otherFP, fp)
	if !errors.Is(err, core.ErrSchemaMismatch) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("decode with a colliding id:\n got %v\nwant %s", err, want)
	}
}

// A body whose header names the reader schema itself decodes without asking
// the registry, whatever the id: no lookup can go wrong.
func TestAvroCodecHeaderOfTheReaderSchemaNeedsNoLookup(t *testing.T) {
	ctx := context.Background()
	pub := codecMustAvro(t, schemareg.NewMemory(), "orders", codecOrderV1)
	sub := codecMustAvro(t, &codecCountingRegistry{SchemaRegistry: schemareg.NewMemory()}, "orders", codecOrderV1)
	body, _ := pub.Encode(ctx, codecOrderV1Go{ID: "A-1"})
	var got codecOrderV1Go
	if err := sub.Decode(core.WithDecodeInfo(ctx, core.DecodeInfo{Fingerprint: pub.(*avroCodec).SchemaFingerprint()}), body, &got); err != nil || got.ID != "A-1" {
		t.Fatalf("decode: %+v, %v", got, err)
	}
	if n := sub.(*avroCodec).reg.(*codecCountingRegistry).lookups; n != 0 {
		t.Fatalf("%d registry lookups, want 0", n)
	}
	// Without the header the (empty) registry is asked, and says not found.
	if err := sub.Decode(ctx, body, &got); !errors.Is(err, core.ErrSchemaNotFound) ||
		!strings.HasPrefix(err.Error(), "look up the writer schema: schema id 1: acemq: schema not found") {
		t.Fatalf("decode without the header: %v", err)
	}
}

type codecCountingRegistry struct {
	msgtype.SchemaRegistry
	lookups int
}

func (r *codecCountingRegistry) Schema(ctx context.Context, id int) (string, error) {
	r.lookups++
	return r.SchemaRegistry.Schema(ctx, id)
}

// A body over the limit is refused before it is read; hamba's string limit
// follows the consumer's limit.
func TestAvroCodecBodyLimits(t *testing.T) {
	ctx := context.Background()
	reg := schemareg.NewMemory()
	c := codecMustAvro(t, reg, "orders", codecOrderV1)
	body, err := c.Encode(ctx, codecOrderV1Go{ID: strings.Repeat("x", 2000)})
	if err != nil {
		t.Fatal(err)
	}
	var got codecOrderV1Go
	err = c.Decode(core.WithDecodeInfo(ctx, core.DecodeInfo{MaxBody: 1000}), body, &got)
	if !errors.Is(err, core.ErrBodyTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("the body is %d bytes, over the consumer's limit of 1000 bytes", len(body))) {
		t.Fatalf("over the limit: %v", err)
	}
	if err := c.Decode(core.WithDecodeInfo(ctx, core.DecodeInfo{MaxBody: 4000}), body, &got); err != nil || len(got.ID) != 2000 {
		t.Fatalf("under the limit: %v", err)
	}
	// A forged string length far beyond the body: refused by hamba's
	// MaxByteSliceSize (set to the body limit), not allocated.
	forged := []byte{0, 0, 0, 0, 1, 0xfe, 0xff, 0xff, 0xff, 0x0f} // length ≈ 2^31
	if err := c.Decode(ctx, forged, &got); err == nil || !strings.Contains(err.Error(), "MaxByteSliceSize") {
		t.Fatalf("forged length: %v", err)
	}
}

// slowRegistry answers Schema after a pause, counting the calls.
type slowRegistry struct {
	msgtype.SchemaRegistry
	mu    sync.Mutex
	calls int
}

func (r *slowRegistry) Schema(ctx context.Context, id int) (string, error) {
	r.mu.Lock()
	r.calls++
	r.mu.Unlock()
	time.Sleep(50 * time.Millisecond)
	return r.SchemaRegistry.Schema(ctx, id)
}

// Sixteen decodes of one new writer id at once make one registry lookup.
func TestAvroCodecOneLookupPerNewWriterID(t *testing.T) {
	ctx := context.Background()
	reg := &slowRegistry{SchemaRegistry: schemareg.NewMemory()}
	pub := codecMustAvro(t, reg, "orders", codecOrderV1)
	sub := codecMustAvro(t, reg, "orders", codecOrderV2)
	body, err := pub.Encode(ctx, codecOrderV1Go{ID: "A-1"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			var got codecOrderV2Go
			if err := sub.Decode(ctx, body, &got); err != nil || got.Currency != "EUR" {
				t.Errorf("decode: %+v, %v", got, err)
			}
		})
	}
	wg.Wait()
	if reg.calls != 1 {
		t.Fatalf("%d registry lookups for one writer id, want 1", reg.calls)
	}
}

// One consumer codec decoding, body after body, what two writer schemas
// wrote, and under two body limits: the writer and the decoder limits the
// last Decode used are remembered, and never used for a body of another
// id or under another limit (v1's bodies get the default currency, v2's
// keep theirs; the small limit refuses the long string the large one takes).
func TestAvroCodecAlternatingWritersAndLimits(t *testing.T) {
	ctx := context.Background()
	reg := schemareg.NewMemory()
	v1 := codecMustAvro(t, reg, "orders", codecOrderV1)
	v2 := codecMustAvro(t, reg, "orders", codecOrderV2)
	long := strings.Repeat("x", 100)
	b1, err := v1.Encode(ctx, codecOrderV1Go{ID: long})
	if err != nil {
		t.Fatal(err)
	}
	b2, err := v2.Encode(ctx, codecOrderV2Go{ID: long, Currency: "GBP"})
	if err != nil {
		t.Fatal(err)
	}
	sub := codecMustAvro(t, reg, "orders", codecOrderV2)
	small := core.WithDecodeInfo(ctx, core.DecodeInfo{MaxBody: 64})
	for i := range 4 {
		for _, c := range []struct {
			body []byte
			want string
		}{{b1, "EUR"}, {b2, "GBP"}} {
			var got codecOrderV2Go
			if err := sub.Decode(ctx, c.body, &got); err != nil || got.ID != long || got.Currency != c.want {
				t.Fatalf("round %d: decode: %q %q, %v; want currency %s", i, got.ID[:min(len(got.ID), 8)], got.Currency, err, c.want)
			}
			if err := sub.Decode(small, c.body, &got); !errors.Is(err, core.ErrBodyTooLarge) {
				t.Fatalf("round %d: decode under a 64-byte limit: %v, want core.ErrBodyTooLarge", i, err)
			}
			forged := append(append([]byte{}, c.body[:avroHeaderLen]...), 0xfe, 0x01) // a string of 127 bytes, in a 7-byte body
			if err := sub.Decode(small, forged, &got); err == nil || !strings.Contains(err.Error(), "MaxByteSliceSize") {
				t.Fatalf("round %d: a forged length under a 64-byte limit: %v, want hamba's MaxByteSliceSize", i, err)
			}
		}
	}
}
