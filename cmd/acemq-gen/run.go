package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	genmanifest "github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/internal/gen/pipeline"
	"github.com/rogpeppe/go-internal/diff"
)

// Exit codes.
const (
	exitOK    = 0
	exitStale = 1 // check: the files on disk are not what acemq-gen would write; compat: a change breaks readers
	exitBad   = 2 // a bad manifest, a usage error, or a file that cannot be read or written
)

const usage = `usage:
  acemq-gen -f acemq.yaml [-o DIR] [-q]    generate the Go code of a manifest; one line
                                           says what was written (-q: none)
  acemq-gen version                        print acemq-gen's version
  acemq-gen check -f acemq.yaml [-o DIR]   exit 0 when the generated code is current,
                                           1 with a unified diff when it is stale
  acemq-gen compat -f acemq.yaml --against DIR|git:REF
                                           exit 0 when every schema change is compatible,
                                           1 with one line per change that breaks a reader
  acemq-gen registry -f acemq.yaml [-dir DIR] [-check]
                                           register every Avro schema in the directory
                                           registry DIR (index.json); -check: exit 1 when
                                           one is missing, writing nothing
  acemq-gen export -f acemq.yaml --format F [-o FILE] [--vhost V]
                                           write the topology as F: definitions (RabbitMQ),
                                           asyncapi (3.0), mermaid, dot or markdown; stdout without -o
-o defaults to the manifest's directory. Exit 2: a bad manifest or a usage error.
`

// run is the whole command, testable as a function.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "compat" {
		return runCompat(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "registry" {
		return runRegistry(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "export" {
		return runExport(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "version" {
		fmt.Fprintf(stdout, "acemq-gen %s\n", version())
		return exitOK
	}
	check := len(args) > 0 && args[0] == "check"
	if check {
		args = args[1:]
	}
	fl := flag.NewFlagSet("acemq-gen", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	manifestPath := fl.String("f", "", "the manifest (acemq.yaml)")
	out := fl.String("o", "", "output directory (default: the manifest's directory)")
	quiet := fl.Bool("q", false, "print nothing on success")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		fmt.Fprintf(stderr, "acemq-gen: %v\n%s", err, usage)
		return exitBad
	}
	switch {
	case fl.NArg() > 0:
		fmt.Fprintf(stderr, "acemq-gen: unexpected argument %q\n%s", fl.Arg(0), usage)
		return exitBad
	case *manifestPath == "":
		fmt.Fprintf(stderr, "acemq-gen: -f is required: the manifest to generate from\n%s", usage)
		return exitBad
	}
	dir := *out
	if dir == "" {
		dir = filepath.Dir(*manifestPath)
	}
	res, err := pipeline.Run(pipeline.Options{Manifest: *manifestPath, OutDir: dir})
	if err != nil {
		printErr(stderr, err)
		return exitBad
	}
	p, err := planFiles(osDir(dir), res.Files)
	if err != nil {
		fmt.Fprintf(stderr, "acemq-gen: %v\n", err)
		return exitBad
	}
	if check {
		return checkFiles(dir, len(res.Files), p, stdout, stderr)
	}
	if len(p.blocked) > 0 {
		for _, name := range p.blocked {
			fmt.Fprintf(stderr, "acemq-gen: %s\n", inTheWay(dir, name))
		}
		fmt.Fprintln(stderr, "acemq-gen: nothing was written")
		return exitBad
	}
	if code := writeFiles(dir, p.changed, stderr); code != exitOK {
		return code
	}
	removed, kept, err := removeLeftovers(dir, p.leftover, underGoGenerate())
	if err != nil {
		fmt.Fprintf(stderr, "acemq-gen: %v\n", err)
		return exitBad
	}
	if !*quiet {
		fmt.Fprintf(stdout, "wrote %s: %s, %s, %s\n", whereWritten(dir, *manifestPath, res.Files),
			counted(res.Messages, "message"), counted(res.Queues, "queue"), counted(res.Publishers, "publisher"))
		if len(removed) > 0 {
			fmt.Fprintf(stdout, "removed %s acemq-gen wrote before and no longer writes: %s\n",
				counted(len(removed), "file"), strings.Join(removed, ", "))
		}
		if len(kept) > 0 {
			fmt.Fprintf(stdout, "emptied %s acemq-gen no longer writes, which go generate is still to read; the next run removes %s: %s\n",
				counted(len(kept), "file"), plural(len(kept), "it", "them"), strings.Join(kept, ", "))
		}
	}
	return exitOK
}

// whereWritten is "7 files to DIR", or, when exports: go outside DIR
// (beside a manifest elsewhere), each group and where it went: "12
// files: 7 to DIR, 5 (exports:) relative to the manifest, in ./examples/orders".
func whereWritten(dir, manifestPath string, files []pipeline.File) string {
	outside := 0
	for _, f := range files {
		if f.Path == ".." || strings.HasPrefix(f.Path, "../") {
			outside++
		}
	}
	if outside == 0 {
		return fmt.Sprintf("%s to %s", counted(len(files), "file"), displayDir(dir))
	}
	return fmt.Sprintf("%s: %d to %s, %d (exports:) relative to the manifest, in %s", counted(len(files), "file"),
		len(files)-outside, displayDir(dir), outside, displayDir(filepath.Dir(manifestPath)))
}

// counted is "1 file", "7 files".
func counted(n int, noun string) string {
	return fmt.Sprintf("%d %s", n, plural(n, noun, noun+"s"))
}

// displayDir is dir as a shell user would write it: ./orders, ., /abs.
func displayDir(dir string) string {
	d := filepath.ToSlash(filepath.Clean(dir))
	if d == "." || filepath.IsAbs(dir) || d == ".." || len(d) > 2 && d[:3] == "../" {
		return d
	}
	return "./" + d
}

// printErr prints err for the command: a manifest's errors as they are
// (each file:line:col: ...), anything else after "acemq-gen: ", which the
// library leaves to the command.
func printErr(stderr io.Writer, err error) {
	var me genmanifest.Errors
	var one *genmanifest.Error
	if errors.As(err, &me) || errors.As(err, &one) {
		fmt.Fprintln(stderr, err)
		return
	}
	fmt.Fprintf(stderr, "acemq-gen: %v\n", err)
}

// version is the module version acemq-gen was built from ("(devel)" in a
// checkout; v1.2.3 after go install ...@v1.2.3), from the build info.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	return moduleVersion(bi.Main)
}

// moduleVersion is m's version, or "(devel)" when m is built from a
// checkout: the main module ("" or "(devel)"), or a module a service's
// go.mod replaces with a directory, whose version is only the placeholder
// the require needed (v0.0.0, v0.0.0-00010101000000-000000000000).
func moduleVersion(m debug.Module) string {
	if m.Version == "" || (m.Replace != nil && m.Replace.Version == "") {
		return "(devel)"
	}
	if m.Replace != nil {
		return m.Replace.Version
	}
	return m.Version
}

// writeFiles writes the files that changed, each through a temporary file renamed into
// place, so that a reader never sees half a file.
func writeFiles(dir string, files []pipeline.File, stderr io.Writer) int {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "acemq-gen: %v\n", err)
		return exitBad
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, f.Path), f.Content); err != nil {
			fmt.Fprintf(stderr, "acemq-gen: %v\n", err)
			return exitBad
		}
	}
	return exitOK
}

func writeFile(path string, content []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		return nil // unchanged: keep the modification time
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err // an export may go to a directory of its own
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".acemq-gen-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// checkFiles reports, for check mode, what generating would change: a
// unified diff (on stdout) of each file that differs or is missing, and
// of each file it would remove (against /dev/null); on stderr, each file
// in the way that generating would refuse to overwrite, and a summary.
func checkFiles(dir string, total int, p *plan, stdout, stderr io.Writer) int {
	for _, f := range p.changed {
		path := filepath.ToSlash(filepath.Join(dir, f.Path))
		old, ok := p.old[f.Path]
		oldName := path
		if !ok {
			oldName = "/dev/null"
		}
		stdout.Write(diff.Diff(oldName, old, path+" (acemq-gen)", f.Content))
	}
	for _, name := range p.leftover {
		path := filepath.Join(dir, name)
		old, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "acemq-gen: %v\n", err)
			return exitBad
		}
		stdout.Write(diff.Diff(filepath.ToSlash(path), old, "/dev/null (acemq-gen removes it)", nil))
	}
	for _, name := range p.blocked {
		fmt.Fprintf(stderr, "acemq-gen check: %s\n", inTheWay(dir, name))
	}
	var stale []string
	if n := len(p.changed); n > 0 {
		stale = append(stale, fmt.Sprintf("%d of %d generated files in %s are stale", n, total, filepath.ToSlash(dir)))
	}
	if n := len(p.leftover); n > 0 {
		stale = append(stale, fmt.Sprintf("%s in %s that acemq-gen wrote before and no longer writes would be removed (%s)",
			counted(n, "file"), filepath.ToSlash(dir), strings.Join(p.leftover, ", ")))
	}
	if len(stale) > 0 {
		fmt.Fprintf(stderr, "acemq-gen check: %s; run go generate (or acemq-gen -f ...)\n", strings.Join(stale, "; "))
	}
	if len(stale) > 0 || len(p.blocked) > 0 {
		return exitStale
	}
	return exitOK
}
