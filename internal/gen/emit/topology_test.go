package emit

import (
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/dave/jennifer/jen"
)

// An argument too large for 32 bits is written int64(...): an untyped
// constant would not compile for a 32-bit int, and AMQP writes an int
// value as 32 bits.
func TestArgumentsKeepTheirWidth(t *testing.T) {
	f := jen.NewFile("p")
	f.Var().Id("A").Op("=").Add(arguments([]*model.Argument{
		{Key: "x-max-length", Value: 1000},
		{Key: "x-max-length-bytes", Value: int64(9223372036854775807)},
	}))
	src := f.GoString()
	for _, want := range []string{`"x-max-length":       1000,`, `"x-max-length-bytes": int64(9223372036854775807),`} {
		if !strings.Contains(src, want) {
			t.Errorf("generated code lacks %s:\n%s", want, src)
		}
	}
}
