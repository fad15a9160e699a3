package input

import (
	"io/fs"
	"strings"
)

// commitFS is the machine's file system (OS) with the repository
// as a commit has it: a name under the repository's top is one of the
// files read from the commit (the manifest and the schema files of its
// directory) or nothing, so that neither a relative path nor an absolute
// one reads the working tree's version; a name outside it is the
// machine's file.
type commitFS struct {
	top    string // the repository's top, a name in OS
	commit *Files
}

// newCommitFS holds files (by path from the repository's top, the
// operating system directory top).
func newCommitFS(top string, files map[string][]byte) (*commitFS, error) {
	name, err := Name(top)
	if err != nil {
		return nil, err
	}
	byName := make(map[string][]byte, len(files))
	for p, data := range files {
		byName[Join(name, p)] = data
	}
	return &commitFS{top: name, commit: Memory(byName)}, nil
}

func (c *commitFS) inCommit(name string) bool {
	return c.top == "." || name == c.top || strings.HasPrefix(name, c.top+"/")
}

func (c *commitFS) Open(name string) (fs.File, error) {
	if c.inCommit(name) {
		return c.commit.Open(name)
	}
	return OS().Open(name)
}
