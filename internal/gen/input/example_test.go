package input_test

import (
	"fmt"
	"testing/fstest"

	"github.com/acemq/acemq-go/internal/gen/input"
)

// Load reads the manifest, each message's schema file and the files their
// $refs name; the later stages read only what it read.
func ExampleLoad() {
	src := fstest.MapFS{
		"svc/acemq.yaml":         {Data: []byte("version: 1\npackage: svc\nmessages:\n  Order: {type: order.v1, schema: schemas/order.json}\n")},
		"svc/schemas/order.json": {Data: []byte(`{"type": "object", "properties": {"total": {"$ref": "../common/money.json"}}}`)},
		"svc/common/money.json":  {Data: []byte(`{"type": "integer"}`)},
		"svc/common/unused.json": {Data: []byte(`{}`)},
	}
	s, err := input.Load(src, "svc/acemq.yaml", "acemq.yaml")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Dir, s.Manifest.Package.Value, s.ParseErr)
	for _, name := range s.FS.Names() {
		fmt.Println(name)
	}
	// Output:
	// svc svc <nil>
	// svc/acemq.yaml
	// svc/common/money.json
	// svc/schemas/order.json
}
