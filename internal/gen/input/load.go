package input

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/manifest"
)

// Set is one manifest's input, read: what model.Build takes.
type Set struct {
	// Manifest is the parsed manifest; nil when it does not parse.
	Manifest *manifest.File
	// ParseErr is what manifest.Parse returned: the manifest's shape
	// errors, or the syntax error that left Manifest nil.
	ParseErr error
	// FS holds every file read: the manifest, each message's schema file
	// and the files their $refs name.
	FS *Files
	// Dir is the manifest's directory in FS, the one its schema paths are
	// relative to.
	Dir string
	// Imports are the other manifests its imports: names, read, in
	// manifest order.
	Imports []*Imported

	self string // the manifest's name in FS
}

// Load reads from src the manifest named file, then the schema file of
// each of its messages and their $ref closure. Errors call the manifest
// shown (its path as the user gave it). The error is not nil only when the manifest
// itself cannot be read; a schema file that cannot be read is the model's
// to report (FS answers with the error reading it gave).
//
// A module: import cannot be resolved in src (see LoadFile, which asks the
// go command): it is an error of that entry.
func Load(src fs.FS, file, shown string) (*Set, error) {
	return load(src, file, shown, nil)
}

func load(src fs.FS, file, shown string, mods Modules) (*Set, error) {
	l := NewLoader(src)
	data, err := l.File(file)
	if err != nil {
		return nil, renamed(err, shown)
	}
	s := &Set{FS: l.Files(), Dir: path.Dir(file), self: file}
	s.Manifest, s.ParseErr = manifest.Parse(shown, data)
	if s.Manifest == nil {
		return s, nil
	}
	for _, mm := range s.Manifest.Messages {
		p := mm.Schema.Value
		name := Resolve(s.Dir, p)
		l.Schema(name, strings.EqualFold(path.Ext(p), ".json"))
		l.display(name, displayPath(shown, p))
	}
	l.imports(s, shown, mods)
	return s, nil
}

// LoadFile is Load of the manifest at the operating system path p, from
// OS; a module: import is found by the go command (GoModules).
func LoadFile(p string) (*Set, error) {
	name, err := Name(p)
	if err != nil {
		return nil, err
	}
	return load(OS(), name, p, GoModules)
}

// display makes the error reading the file name, when there is one, name
// it as shown: the path the model reads it by, as acemq-gen always named
// it (the manifest's directory as given, joined to the schema: value).
func (l *Loader) display(name, shown string) {
	if r, ok := l.files.files[name]; ok && r.err != nil {
		r.err = renamed(r.err, shown)
		l.files.files[name] = r
	}
}

// renamed is err with its path shown, when it is an *fs.PathError.
func renamed(err error, shown string) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: pe.Op, Path: shown, Err: pe.Err}
}

// displayPath is how a schema file was always named in errors: as written
// when absolute, else joined to the manifest's directory as given.
func displayPath(manifestPath, p string) string {
	p = filepath.FromSlash(p)
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(manifestPath), p)
}
