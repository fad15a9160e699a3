package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/emit"
	"github.com/acemq/acemq-go/internal/gen/pipeline"
)

// plan is what generating into a directory means for the files already
// there: which generated files differ from the ones on disk, which file
// in the way acemq-gen must not overwrite, and which files an earlier run
// wrote that this one no longer writes.
type plan struct {
	// changed are the files whose bytes differ from the disk's, or that
	// are missing (old has no entry for them).
	changed []pipeline.File
	// old is the content on disk of each changed file that exists.
	old map[string][]byte
	// blocked are the Go files of the run that exist and that acemq-gen
	// did not write (emit.HasHeader is false): never overwritten.
	blocked []string
	// leftover are the files of the directory that acemq-gen wrote
	// (emit.Ours) and this run does not write, to remove.
	leftover []string
}

// planFiles compares files (the generator's, names relative to the
// output directory) with the output directory dir, read through fsys
// (names in it are dir's; a missing directory is an empty one). Only a
// Go file is checked for the header: an export (never .go) is written
// where the manifest's exports: put it, which is the user's own choice
// of name. Only the directory itself, where the Go files go, is looked
// through for leftovers, not its subdirectories.
func planFiles(fsys fs.FS, files []pipeline.File) (*plan, error) {
	p := &plan{old: map[string][]byte{}}
	writes := map[string]bool{}
	for _, f := range files {
		writes[f.Path] = true
		old, err := fs.ReadFile(fsys, f.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			p.changed = append(p.changed, f)
		case err != nil:
			return nil, err
		case strings.HasSuffix(f.Path, ".go") && !emit.HasHeader(old):
			p.blocked = append(p.blocked, f.Path)
		case !bytes.Equal(old, f.Content):
			p.changed = append(p.changed, f)
			p.old[f.Path] = old
		}
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if writes[name] || !e.Type().IsRegular() || !strings.HasSuffix(name, ".go") {
			continue
		}
		content, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		if emit.Ours(name, content) {
			p.leftover = append(p.leftover, name)
		}
	}
	slices.Sort(p.leftover)
	return p, nil
}

// inTheWay is the line saying that name, in the output directory dir
// (as the user wrote it), is a file acemq-gen will not overwrite, and
// what to do.
func inTheWay(dir, name string) string {
	return fmt.Sprintf("%s exists and acemq-gen did not write it (its first line is not %q), so acemq-gen does not overwrite it: "+
		"rename or move it (acemq-gen's own files end in %s), or generate into another directory with -o",
		filepath.ToSlash(filepath.Join(dir, name)), "// "+emit.Header, emit.Suffix)
}

// osDir is the output directory on disk as an fs.FS whose names may
// leave it (an export of -o sub's manifest at ../definitions.json):
// fs.ReadFile and fs.ReadDir take its methods, which join any name.
type osDir string

func (d osDir) Open(name string) (fs.File, error) { return os.Open(d.path(name)) }

func (d osDir) ReadFile(name string) ([]byte, error) { return os.ReadFile(d.path(name)) }

func (d osDir) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(d.path(name)) }

func (d osDir) path(name string) string { return filepath.Join(string(d), filepath.FromSlash(name)) }

// goGenerate is the go generate run acemq-gen runs under, if any: go
// generate lists each package's files when it starts and reads them one
// by one, in order, and stops every package after with "generate: open
// ...: no such file or directory" when one has gone. So a leftover it may
// still read is not removed but emptied (emptied), which go generate reads
// without harm; as it now starts with //go:build ignore, the next run's go
// generate does not list it, and that run removes it.
type goGenerate struct {
	file string // $GOFILE: the file whose directive runs, in the package's directory
	dir  string // the working directory, the package's (go generate runs there)
}

// underGoGenerate is the go generate run of the environment, or nil.
func underGoGenerate() *goGenerate {
	file := os.Getenv("GOFILE")
	if file == "" || os.Getenv("GOPACKAGE") == "" {
		return nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return &goGenerate{file: file}
	}
	return &goGenerate{file: file, dir: wd}
}

// mayRead reports whether go generate may still read the file name of
// the output directory dir (content is what it holds): a file it lists
// that sorts after the one it runs, in the same directory, or any file of
// another directory (another package of the run may be still to come).
// A file of acemq-gen's emptied by an earlier run is never listed.
func (g *goGenerate) mayRead(dir, name string, content []byte) bool {
	if g == nil || isEmptied(content) {
		return false
	}
	abs, err := filepath.Abs(dir)
	if err != nil || g.dir == "" || abs != g.dir {
		return true
	}
	// The package's non-test files come first, sorted; then its tests.
	return !strings.HasSuffix(g.file, "_test.go") && name > g.file
}

// ignoreLine is the build constraint of a file emptied, which keeps it
// out of the package and out of go generate's list.
const ignoreLine = "//go:build ignore"

// emptied is the content a leftover takes when it cannot be removed yet:
// the header (so that it is still acemq-gen's), a line saying why, the
// build constraint, and the package clause of what it held.
func emptied(old []byte) []byte {
	pkg := "ignored"
	if f, err := parser.ParseFile(token.NewFileSet(), "", old, parser.PackageClauseOnly); err == nil {
		pkg = f.Name.Name
	}
	return fmt.Appendf(nil, "// %s\n// acemq-gen no longer writes this file; go generate was still to read it, so it is emptied, and the next run removes it.\n\n%s\n\npackage %s\n",
		emit.Header, ignoreLine, pkg)
}

// isEmptied reports whether content is a leftover emptied by an earlier
// run: its comments before the package clause hold ignoreLine.
func isEmptied(content []byte) bool {
	for line := range strings.Lines(string(content)) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == ignoreLine:
			return true
		case line != "" && !strings.HasPrefix(line, "//"):
			return false
		}
	}
	return false
}

// removeLeftovers removes the leftovers of dir, or empties those that go
// generate (g, nil when not under it) may still read.
func removeLeftovers(dir string, names []string, g *goGenerate) (removed, kept []string, err error) {
	for _, name := range names {
		path := filepath.Join(dir, name)
		content, err := os.ReadFile(path)
		if err != nil {
			return removed, kept, err
		}
		if g.mayRead(dir, name, content) {
			if err := writeFile(path, emptied(content)); err != nil {
				return removed, kept, err
			}
			kept = append(kept, name)
			continue
		}
		if err := os.Remove(path); err != nil {
			return removed, kept, err
		}
		removed = append(removed, name)
	}
	return removed, kept, nil
}
