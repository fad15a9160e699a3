// Package pipeline runs acemq-gen's stages in order: input (the one that
// reads files) → manifest → model → emit (Go with jennifer, one file per
// concern) → gofmt, and export (the artifacts the manifest's exports:
// lists). Package generator is its public entry (Generate); the command
// (cmd/acemq-gen) uses it directly for what only the command needs: the
// counts of its success line (Run), the model alone (Load, for export and
// registry) and the header's source line (Source).
package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"

	"github.com/acemq/acemq-go/internal/gen/emit"
	"github.com/acemq/acemq-go/internal/gen/export"
	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/internal/gen/model"
)

// Options says what to generate: generator.Options's fields, which
// document them.
type Options struct {
	Manifest string
	OutDir   string
	FS       fs.FS
}

// File is one generated file (as generator.File).
type File struct {
	Path    string // relative to the output directory
	Content []byte // gofmt'd Go, or an export (see Exports)
}

// Result is what Run generated: the files, and the counts the command's
// success line reports.
type Result struct {
	Files                        []File
	Messages, Queues, Publishers int
}

// Run runs the pipeline and says what the manifest holds. A bad manifest
// is a manifest.Errors listing every problem; the output is deterministic:
// the same inputs give the same bytes. It writes nothing, so a caller
// writes the files only when the whole run succeeded.
func Run(opts Options) (*Result, error) {
	m, err := load(opts)
	if err != nil {
		return nil, err
	}
	files, err := generate(m, opts)
	if err != nil {
		return nil, err
	}
	return &Result{Files: files, Messages: len(m.Messages), Queues: len(m.Queues), Publishers: len(m.Publishers)}, nil
}

func generate(m *model.Model, opts Options) ([]File, error) {
	files, err := Render(m, Source(opts))
	if err != nil {
		return nil, err
	}
	exports, err := Exports(m, opts)
	if err != nil {
		return nil, err
	}
	return append(files, exports...), nil
}

// Load reads the manifest at path and builds its model (schema paths are
// relative to the manifest's directory); a bad manifest is a
// manifest.Errors listing every problem.
func Load(path string) (*model.Model, error) {
	return load(Options{Manifest: path})
}

func load(opts Options) (*model.Model, error) {
	var s *input.Set
	var err error
	if opts.FS == nil {
		s, err = input.LoadFile(opts.Manifest)
	} else {
		s, err = input.Load(opts.FS, path.Clean(opts.Manifest), opts.Manifest)
	}
	if err != nil {
		return nil, err
	}
	return Build(s)
}

// Build builds the model of a manifest that internal/gen/input read; it does
// no I/O. A bad manifest is a manifest.Errors listing every problem.
func Build(s *input.Set) (*model.Model, error) {
	f, shapeErr := s.Manifest, s.ParseErr
	if f == nil {
		return nil, shapeErr
	}
	m, err := model.Build(f, s.FS, s.Dir, s.Imports...)
	if shapeErr != nil {
		return nil, merge(shapeErr, err)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Exports renders the artifacts the manifest's exports: lists (see
// internal/gen/export), each with its Path relative to the output directory
// (the manifest names it relative to its own directory). Each artifact's
// header names the manifest relative to the artifact's directory.
func Exports(m *model.Model, opts Options) ([]File, error) {
	out := opts.OutDir
	if out == "" {
		out = filepath.Dir(opts.Manifest)
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	absDir, err := filepath.Abs(filepath.Dir(opts.Manifest))
	if err != nil {
		return nil, err
	}
	var files []File
	for _, x := range m.Exports {
		target := filepath.Join(absDir, filepath.FromSlash(x.Path))
		rel, err := filepath.Rel(absOut, target)
		if err != nil {
			return nil, fmt.Errorf("exports: %s: %w", x.Path, err)
		}
		src := Source(Options{Manifest: opts.Manifest, OutDir: filepath.Dir(target)})
		content, err := export.Render(m, x.Format, export.Options{Source: src, Vhost: x.Vhost})
		if err != nil {
			return nil, fmt.Errorf("exports: %s: %w", x.Path, err)
		}
		files = append(files, File{Path: filepath.ToSlash(rel), Content: content})
	}
	return files, nil
}

// merge adds to the errors of a manifest's shape those of its meaning that
// are not echoes of them: an error of meaning on a line that already has a
// shape error, or with no position (a missing value), is left out.
func merge(shapeErr, meaningErr error) error {
	var shape, meaning manifest.Errors
	if !errors.As(shapeErr, &shape) {
		return shapeErr
	}
	if !errors.As(meaningErr, &meaning) {
		return shape
	}
	lines := map[int]bool{}
	for _, e := range shape {
		lines[e.Pos.Line] = true
	}
	out := slices.Clone(shape)
	for _, e := range meaning {
		if e.Pos.Line != 0 && !lines[e.Pos.Line] {
			out = append(out, e)
		}
	}
	return out.Sorted()
}

// Source is the header's "source:" line for opts: the manifest's path
// relative to the output directory, with forward slashes.
func Source(opts Options) string {
	out := opts.OutDir
	if out == "" {
		out = filepath.Dir(opts.Manifest)
	}
	absOut, err1 := filepath.Abs(out)
	absMan, err2 := filepath.Abs(opts.Manifest)
	if err1 == nil && err2 == nil {
		if rel, err := filepath.Rel(absOut, absMan); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(filepath.Base(opts.Manifest))
}

// Render emits and formats the files of m.
func Render(m *model.Model, source string) ([]File, error) {
	var files []File
	for _, o := range emit.Files(m, source) {
		// Render runs go/format.Source on the file: what it returns is
		// gofmt'd, and an emitter bug is an error here, never bad Go on disk.
		var buf bytes.Buffer
		if err := o.File.Render(&buf); err != nil {
			return nil, fmt.Errorf("emitting %s: %w (a bug: please report it with the manifest)", o.Name, err)
		}
		content, err := emit.Format(buf.Bytes())
		if err != nil {
			return nil, fmt.Errorf("emitting %s: %w (a bug: please report it with the manifest)", o.Name, err)
		}
		files = append(files, File{Path: o.Name, Content: content})
	}
	return files, nil
}
