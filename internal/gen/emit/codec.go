package emit

import (
	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/dave/jennifer/jen"
)

// codecFile emits the JSON codec of the package's JSON messages, apart
// from their checks (checks.acemq.go): the encoders (encoders.go), which
// write json.Marshal's bytes without reflection, and the one-pass decoders
// (decoders.go). A package without any has the file, empty, as it has
// checks.acemq.go, so that the set of generated files never depends on the
// schemas.
func codecFile(m *model.Model, source string) *jen.File {
	f := newFile(m, source)
	if m.Types == nil {
		return f
	}
	encodersCode(f, m)
	decodersCode(f, m)
	return f
}
