package compat

import (
	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/model"
)

// Build builds the model of a manifest that internal/gen/input read
// (input.LoadFile for the current version, input.LoadPrevious for the
// previous one): the manifest's shape errors when it has any, else its
// meaning's. It does no I/O: the schemas' bytes are in s.FS.
func Build(s *input.Set) (*model.Model, error) {
	if s.ParseErr != nil {
		return nil, s.ParseErr
	}
	return model.Build(s.Manifest, s.FS, s.Dir, s.Imports...)
}
