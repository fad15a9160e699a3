package input

import (
	"bytes"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// commitFS is the machine's file system (OS) with the repository
// as a commit has it: a name under the repository's top is one of the
// files of the commit or nothing, so that neither a relative path nor an
// absolute one reads the working tree's version; a name outside it is the
// machine's file. The manifest and the schema files of its directory are
// read at once; any other file under the top (an imported manifest
// beside it, its schemas) is read from the commit when first opened.
type commitFS struct {
	top    string // the repository's top, a name in OS
	topOS  string // the same, as an operating system path
	ref    string
	commit *Files

	mu    sync.Mutex
	later map[string]*Files // by name: a file read from the commit on demand
}

// newCommitFS holds files (by path from the repository's top, the
// operating system directory top) of the commit ref.
func newCommitFS(top, ref string, files map[string][]byte) (*commitFS, error) {
	name, err := Name(top)
	if err != nil {
		return nil, err
	}
	byName := make(map[string][]byte, len(files))
	for p, data := range files {
		byName[Join(name, p)] = data
	}
	return &commitFS{top: name, topOS: top, ref: ref, commit: Memory(byName), later: map[string]*Files{}}, nil
}

func (c *commitFS) inCommit(name string) bool {
	return c.top == "." || name == c.top || strings.HasPrefix(name, c.top+"/")
}

func (c *commitFS) Open(name string) (fs.File, error) {
	if !c.inCommit(name) {
		return OS().Open(name)
	}
	if f, err := c.commit.Open(name); err == nil {
		return f, nil
	}
	return c.read(name).Open(name)
}

// read is the file name (under the top) as the commit has it, read once.
func (c *commitFS) read(name string) *Files {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.later[name]; ok {
		return f
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(name, c.top), "/")
	if c.top == "." {
		rel = name
	}
	f := Memory(nil)
	if out, err := git(c.topOS, bytes.NewReader(nil), "cat-file", "blob", c.ref+":"+path.Clean(rel)); err == nil {
		f = Memory(map[string][]byte{name: out})
	}
	c.later[name] = f
	return f
}

// Stat describes the file name without opening a file outside the commit
// (a named pipe would wait for a writer).
func (c *commitFS) Stat(name string) (fs.FileInfo, error) {
	if !c.inCommit(name) {
		return osFS{}.Stat(name)
	}
	f, err := c.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// realName follows the symlinks of a name outside the commit; a name in
// it is a file of the commit, where nothing is followed.
func (c *commitFS) realName(name string) (string, error) {
	if !c.inCommit(name) {
		return osFS{}.realName(name)
	}
	return name, nil
}
