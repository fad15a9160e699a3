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

// File reads the file name.
func (l *Loader) File(name string) ([]byte, error) {
	r, ok := l.files.files[name]
	if !ok {
		r.data, r.err = fs.ReadFile(l.src, name)
		l.files.files[name] = r
	}
	return r.data, r.err
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
	_, err := l.File(name)
	if errors.Is(err, fs.ErrNotExist) {
		l.Dir(path.Dir(name))
		return
	}
	if json {
		l.closure(name)
	}
}

// closure reads the files that the $refs of the JSON file name name, and
// theirs.
func (l *Loader) closure(name string) {
	queue := []string{name}
	seen := map[string]bool{name: true}
	for len(queue) > 0 {
		from := queue[0]
		queue = queue[1:]
		data, err := l.File(from)
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
