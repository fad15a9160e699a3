package input

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/manifest"
)

// DefaultManifest is the file an import names when it names a directory
// (path:) or a module without manifest:.
const DefaultManifest = "acemq.yaml"

// Imported is one entry of a manifest's imports:, read: the other
// manifest, parsed, and its schema files (in the Set's FS). Imports are
// not transitive: the other manifest's own imports: are not read.
type Imported struct {
	// Entry is the imports: entry.
	Entry *manifest.Import
	// Manifest is the other manifest, parsed; nil when Err is set or it
	// does not parse.
	Manifest *manifest.File
	// ParseErr is what manifest.Parse returned for it.
	ParseErr error
	// Err says why the other manifest was not read: a module go could
	// not find, a file that does not exist. It is reported at Entry.
	Err error
	// Dir is the other manifest's directory in FS, the one its schema
	// paths are relative to.
	Dir string
	// Shown is how errors name the other manifest: the path as the
	// importing manifest's directory was given, joined to path:, or
	// module@version/manifest.
	Shown string
	// Ref is the other manifest as the importing one names it, whatever
	// the working directory: path: joined to acemq.yaml when it names a
	// directory (../orders/acemq.yaml), or module@version/manifest. The
	// generated code says it.
	Ref string
	// Prefix is what the other manifest's relative schema paths are
	// joined to where the importing service shows them (the schema
	// constant's comment, an AsyncAPI summary): the directory of path:
	// as written (../orders), or module@version.
	Prefix string
	// Module is the module path of a module: import ("" for path:), and
	// Version the version read.
	Module, Version string
	// Root is a module: import's directory in FS ("" for path:): every
	// file read for the other manifest (the manifest, its schema files,
	// the files their $refs name) is under it, also once symlinks are
	// followed; one outside is not read (ErrOutsideModule).
	Root string
}

// Modules finds the directory of a Go module for a module: import: the
// module path, the version (empty: the one the go.mod of the directory
// from requires), from being the importing manifest's directory (a name
// in the file system read). It returns the module's directory, a name in
// that file system, and the version found.
type Modules func(from, module, version string) (dir, found string, err error)

// imports reads the other manifests of s.Manifest's imports:.
func (l *Loader) imports(s *Set, shown string, mods Modules) {
	for _, e := range s.Manifest.Imports {
		im := &Imported{Entry: e}
		s.Imports = append(s.Imports, im)
		var file string
		var sc scope
		switch {
		case e.Path != nil && e.Module == nil:
			p := e.Path.Value
			file = Resolve(s.Dir, p)
			im.Prefix = path.Dir(p)
			if !strings.HasSuffix(strings.ToLower(p), ".yaml") && !strings.HasSuffix(strings.ToLower(p), ".yml") {
				file = path.Join(file, DefaultManifest) // a directory
				im.Prefix = p
			}
			im.Ref = path.Join(im.Prefix, path.Base(file))
			im.Shown = displayPath(shown, im.Ref)
		case e.Module != nil && e.Path == nil:
			if mods == nil {
				im.Err = fmt.Errorf("a module: import needs the go command, and this run reads from a file system of its own (generator.Options.FS); use path:")
				continue
			}
			version := ""
			if e.Version != nil {
				version = e.Version.Value
			}
			dir, found, err := mods(s.Dir, e.Module.Value, version)
			if err != nil {
				im.Err = err
				continue
			}
			im.Module, im.Version = e.Module.Value, found
			rel := DefaultManifest
			if e.Manifest != nil {
				rel = e.Manifest.Value
			}
			file = Join(dir, rel)
			sc = scope{module: e.Module.Value, root: dir}
			im.Root = dir
			im.Prefix = e.Module.Value
			if found != "" {
				im.Prefix += "@" + found
			}
			im.Shown = path.Join(im.Prefix, rel)
			im.Ref = im.Shown
			im.Prefix = path.Join(im.Prefix, path.Dir(rel))
		default:
			continue // the model reports the entry: path or module, one of them
		}
		if file == s.self {
			im.Err = fmt.Errorf("%s is this manifest: a manifest does not import itself", im.Shown)
			continue
		}
		data, err := l.fileIn(sc, file)
		if err != nil {
			im.Err = renamed(err, im.Shown)
			continue
		}
		im.Dir = path.Dir(file)
		im.Manifest, im.ParseErr = manifest.Parse(im.Shown, data)
		if im.Manifest == nil {
			continue
		}
		for _, mm := range im.Manifest.Messages {
			p := mm.Schema.Value
			name := Resolve(im.Dir, p)
			l.schemaIn(sc, name, strings.EqualFold(path.Ext(p), ".json"))
			l.display(name, filepath.FromSlash(im.SchemaPath(p)))
		}
	}
}

// SchemaPath is how the importing service shows the other manifest's
// schema path p: joined to Prefix when relative.
func (im *Imported) SchemaPath(p string) string {
	if isAbs(p) {
		return p
	}
	return path.Join(im.Prefix, p)
}
