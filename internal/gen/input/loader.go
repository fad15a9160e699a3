package input

import (
	"errors"
	"io/fs"
	"path"
)

// A Loader reads files from a file system into Files, each once: reading
// a name again gives what the first read gave.
type Loader struct {
	src   fs.FS
	files *Files
}

// NewLoader reads from src.
func NewLoader(src fs.FS) *Loader {
	return &Loader{src: src, files: newFiles()}
}

// Files is what was read so far.
func (l *Loader) Files() *Files { return l.files }

// File reads the file name: a regular file of at most MaxFileSize bytes
// (ErrNotRegular, ErrTooLarge otherwise).
func (l *Loader) File(name string) ([]byte, error) {
	r, ok := l.files.files[name]
	if !ok {
		r.data, r.err = readFile(l.src, name)
		l.files.files[name] = r
	}
	return r.data, r.err
}

// scope is whose files a read is for: a manifest imported from a Go
// module reads only under the module's directory; the zero scope (the
// service's own manifest, a path: import) anywhere.
type scope struct {
	module string // the module path, for errors
	root   string // the module's directory, a name; "" for no bound
}

// fileIn reads the file name for sc: File, unless name is outside sc's
// module, which is then not read (the refusal is what Files answers for
// it, unless it was read for the service itself).
func (l *Loader) fileIn(sc scope, name string) ([]byte, error) {
	if sc.root != "" {
		if err := confined(l.src, sc.module, sc.root, name); err != nil {
			if _, ok := l.files.files[name]; !ok {
				l.files.files[name] = read{err: err}
			}
			return nil, err
		}
	}
	return l.File(name)
}

// Dir lists the directory name (each entry's name and type only: its
// Info has no size).
func (l *Loader) Dir(name string) {
	if _, ok := l.files.dirs[name]; ok {
		return
	}
	list, err := fs.ReadDir(l.src, name)
	var e entry
	for _, d := range list {
		i := info{name: d.Name(), mode: d.Type() | 0o444}
		if d.IsDir() {
			i = dirInfo(d.Name())
		}
		e.list = append(e.list, i)
	}
	e.err = err
	l.files.dirs[name] = e
}

// Schema reads the schema file name and, when json is true (a JSON
// Schema file), the files its $refs name, transitively. When the file
// does not exist, its directory is listed instead (for a did-you-mean).
func (l *Loader) Schema(name string, json bool) {
	l.schemaIn(scope{}, name, json)
}

// schemaIn is Schema for sc: nothing outside sc's module is read or
// listed.
func (l *Loader) schemaIn(sc scope, name string, json bool) {
	_, err := l.fileIn(sc, name)
	if errors.Is(err, fs.ErrNotExist) {
		if dir := path.Dir(name); sc.root == "" || Within(sc.root, dir) {
			l.Dir(dir)
		}
		return
	}
	if json {
		l.closure(sc, name)
	}
}

// closure reads the files that the $refs of the JSON file name name, and
// theirs, for sc.
func (l *Loader) closure(sc scope, name string) {
	queue := []string{name}
	seen := map[string]bool{name: true}
	for len(queue) > 0 {
		from := queue[0]
		queue = queue[1:]
		data, err := l.fileIn(sc, from)
		if err != nil {
			continue
		}
		for _, target := range refFiles(from, data) {
			if !seen[target] {
				seen[target] = true
				queue = append(queue, target)
			}
		}
	}
}
