package input

import (
	"bytes"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"time"
)

// Files is what a Loader read, in memory: an fs.FS (with ReadFile,
// ReadDir and Stat) whose every answer was settled when the file was read.
// A file that could not be read answers with the error reading it gave;
// a name never read does not exist. Files does no I/O and is safe for
// concurrent use once loaded.
type Files struct {
	files map[string]read  // by name: what reading the file gave
	dirs  map[string]entry // by name: what listing the directory gave
}

type read struct {
	data []byte
	err  error
}

type entry struct {
	list []fs.DirEntry
	err  error
}

func newFiles() *Files {
	return &Files{files: map[string]read{}, dirs: map[string]entry{}}
}

// Names are the names of the files read, sorted (those that could not be
// read included).
func (f *Files) Names() []string {
	names := make([]string, 0, len(f.files))
	for n := range f.files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Open opens a file or a listed directory.
func (f *Files) Open(name string) (fs.File, error) {
	if r, ok := f.files[name]; ok {
		if r.err != nil {
			return nil, r.err
		}
		return &memFile{info: fileInfo(name, r.data), r: bytes.NewReader(r.data)}, nil
	}
	if d, ok := f.dirs[name]; ok {
		if d.err != nil {
			return nil, d.err
		}
		return &memDir{info: dirInfo(name), list: d.list}, nil
	}
	return nil, notExist("open", name)
}

// ReadFile returns a copy of the file's bytes, or the error reading it gave.
func (f *Files) ReadFile(name string) ([]byte, error) {
	r, ok := f.files[name]
	if !ok {
		if _, dir := f.dirs[name]; dir {
			return nil, &fs.PathError{Op: "read", Path: name, Err: errIsDir}
		}
		return nil, notExist("open", name)
	}
	if r.err != nil {
		return nil, r.err
	}
	return slices.Clone(r.data), nil
}

// ReadDir returns the listing of a directory, or the error listing it gave.
func (f *Files) ReadDir(name string) ([]fs.DirEntry, error) {
	d, ok := f.dirs[name]
	if !ok {
		return nil, notExist("open", name)
	}
	return slices.Clone(d.list), d.err
}

// Stat describes a file or a listed directory.
func (f *Files) Stat(name string) (fs.FileInfo, error) {
	file, err := f.Open(name)
	if err != nil {
		return nil, err
	}
	return file.Stat()
}

var errIsDir = isDirError{}

type isDirError struct{}

func (isDirError) Error() string { return "is a directory" }

func notExist(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}

func fileInfo(name string, data []byte) info {
	return info{name: path.Base(name), size: int64(len(data)), mode: 0o444}
}

func dirInfo(name string) info {
	return info{name: path.Base(name), mode: fs.ModeDir | 0o555}
}

// info is the FileInfo of a file or directory of Files.
type info struct {
	name string
	size int64
	mode fs.FileMode
}

func (i info) Name() string               { return i.name }
func (i info) Size() int64                { return i.size }
func (i info) Mode() fs.FileMode          { return i.mode }
func (i info) ModTime() time.Time         { return time.Time{} }
func (i info) IsDir() bool                { return i.mode.IsDir() }
func (i info) Sys() any                   { return nil }
func (i info) Type() fs.FileMode          { return i.mode.Type() }
func (i info) Info() (fs.FileInfo, error) { return i, nil }

type memFile struct {
	info info
	r    *bytes.Reader
}

func (m *memFile) Stat() (fs.FileInfo, error) { return m.info, nil }
func (m *memFile) Read(p []byte) (int, error) { return m.r.Read(p) }
func (m *memFile) Close() error               { return nil }

type memDir struct {
	info info
	list []fs.DirEntry
	off  int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errIsDir}
}
func (d *memDir) Close() error { return nil }

// ReadDir lists the directory as fs.ReadDirFile says.
func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.list[d.off:]
	if n <= 0 {
		d.off = len(d.list)
		return slices.Clone(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	d.off += len(rest)
	return slices.Clone(rest), nil
}

// Memory is Files holding files (contents by name) as if they had been
// read, each directory above one listing what it holds.
func Memory(files map[string][]byte) *Files {
	f := newFiles()
	kids := map[string]map[string]info{}
	for name, data := range files {
		f.files[name] = read{data: data}
		i := fileInfo(name, data)
		for child := name; child != "."; child = path.Dir(child) {
			dir := path.Dir(child)
			if kids[dir] == nil {
				kids[dir] = map[string]info{}
			}
			kids[dir][i.name] = i
			i = dirInfo(dir)
		}
	}
	for dir, names := range kids {
		var e entry
		for _, n := range slices.Sorted(maps.Keys(names)) {
			e.list = append(e.list, names[n])
		}
		f.dirs[dir] = e
	}
	return f
}
