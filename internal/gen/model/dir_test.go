package model

import (
	"testing"

	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/manifest"
)

// buildDir is Build of f with its schema files in the directory dir of
// the machine's file system.
func buildDir(t *testing.T, f *manifest.File, dir string) (*Model, error) {
	t.Helper()
	name, err := input.Name(dir)
	if err != nil {
		t.Fatal(err)
	}
	return Build(f, input.OS(), name)
}
