package goldentest

import (
	"context"
	"reflect"
	"testing"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/registry"
)

// RoundTrip encodes v with mt's codec (an in-memory registry for Avro)
// and decodes the body back, failing unless the value is equal: each
// golden case's broker-free test, so that go test without a broker still
// exercises the generated types against their schemas.
func RoundTrip[T any](t *testing.T, mt *runtime.MessageType[T], v T) {
	t.Helper()
	ctx := context.Background()
	codec, err := mt.Codec(registry.NewMemory())
	if err != nil {
		t.Fatalf("%s: codec: %v", mt.Name(), err)
	}
	body, err := codec.Encode(ctx, v)
	if err != nil {
		t.Fatalf("%s: encode %+v: %v", mt.Name(), v, err)
	}
	var got T
	if err := codec.Decode(ctx, body, &got); err != nil {
		t.Fatalf("%s: decode: %v", mt.Name(), err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Errorf("%s: round trip gave %+v, want %+v", mt.Name(), got, v)
	}
}
