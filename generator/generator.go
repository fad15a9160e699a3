// Package generator is acemq-gen as a library: Generate reads a manifest
// (acemq.yaml) and the schema files it names, and returns the Go files and
// the artifacts acemq-gen would write, writing nothing itself, so a caller
// writes them only when the whole run succeeded. cmd/acemq-gen is built on
// it; docs/generator.md describes the manifest and what is generated.
//
// The stages (input → manifest → model → schema → emit, export) are
// internal (github.com/acemq/acemq-go/internal/gen/...): only the first,
// input, reads files, each once; the others do no I/O.
package generator

import (
	"io/fs"

	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/internal/gen/pipeline"
)

// Options says what to generate.
type Options struct {
	// Manifest is the manifest's path; errors name it as given.
	Manifest string
	// OutDir is where the files will go (default: the manifest's
	// directory). It only decides the header's "source:" line, which is
	// the manifest's path relative to OutDir.
	OutDir string
	// FS, when not nil, is where the manifest and its schema files are
	// read from, Manifest being a name in it (an absolute schema path
	// names a file from its root); default: the machine's file system.
	// Either way the loading stage (internal/gen/input) reads each file once,
	// before the other stages run; they do no I/O.
	FS fs.FS
}

// File is one generated file.
type File struct {
	Path    string // relative to the output directory
	Content []byte // gofmt'd Go, or an export (an artifact of the manifest's exports:)
}

// Errors is every problem found in a manifest (its shape, its meaning, its
// schemas), in position order, one line each; errors.As finds it, and each
// *Error, in what Generate returns.
type Errors = manifest.Errors

// Error is one problem at a position of the manifest (or of a file it
// names): Error() is "file:line:col: msg".
type Error = manifest.Error

// Pos is a position in a file, 1-based (Line 0: no position; Col 0: the
// whole line).
type Pos = manifest.Pos

// Generate runs the pipeline. A bad manifest is an Errors listing every
// problem; a file that cannot be read is the *fs.PathError reading it gave.
// The output is deterministic: the same inputs give the same bytes.
func Generate(opts Options) ([]File, error) {
	res, err := pipeline.Run(pipeline.Options{Manifest: opts.Manifest, OutDir: opts.OutDir, FS: opts.FS})
	if err != nil {
		return nil, err
	}
	files := make([]File, len(res.Files))
	for i, f := range res.Files {
		files[i] = File{Path: f.Path, Content: f.Content}
	}
	return files, nil
}
