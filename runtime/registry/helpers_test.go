package registry

import (
	"testing"

	"github.com/acemq/acemq-go/runtime"
)

// The Ruby tutorial's step 7: a producer on v1, a consumer on v2, which
// adds currency with a default (as runtime's codec tests have them).
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

func codecMustAvro(t testing.TB, reg runtime.SchemaRegistry, subject, schema string) runtime.Codec {
	t.Helper()
	c, err := runtime.NewAvroCodec(reg, subject, schema)
	if err != nil {
		t.Fatalf("NewAvroCodec: %v", err)
	}
	return c
}
