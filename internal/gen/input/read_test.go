package input

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// endless is a file system whose every file reads without end, as
// /dev/zero does, whatever its Stat says; it fails the read past 64 MiB
// (a read with no cap) rather than run out of memory.
type endless struct {
	mode  fs.FileMode
	opens []string
}

func (e *endless) Open(name string) (fs.File, error) {
	e.opens = append(e.opens, name)
	return &endlessFile{name: name, mode: e.mode}, nil
}

func (e *endless) Stat(name string) (fs.FileInfo, error) { return info{name: name, mode: e.mode}, nil }

type endlessFile struct {
	name string
	mode fs.FileMode
	read int
}

func (f *endlessFile) Stat() (fs.FileInfo, error) { return info{name: f.name, mode: f.mode}, nil }
func (f *endlessFile) Close() error               { return nil }
func (f *endlessFile) Read(p []byte) (int, error) {
	if f.read > 64<<20 {
		return 0, errors.New("read past 64 MiB: no cap")
	}
	clear(p)
	f.read += len(p)
	return len(p), nil
}

// Every file read has a cap and must be a regular file: a device is
// refused unopened, a file that says it is small but reads without end is
// cut at MaxFileSize.
func TestReadFileCapped(t *testing.T) {
	dev := &endless{mode: fs.ModeDevice | fs.ModeCharDevice}
	l := NewLoader(dev)
	if _, err := l.File("dev/zero"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("reading a character device: %v, want ErrNotRegular", err)
	}
	if len(dev.opens) != 0 {
		t.Errorf("the device was opened: %q", dev.opens)
	}
	liar := &endless{} // regular, size 0, endless
	if _, err := NewLoader(liar).File("svc/s.json"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("reading a file that does not end: %v, want ErrTooLarge", err)
	}
	src := fstest.MapFS{
		"svc/big.json":  {Data: bytes.Repeat([]byte(" "), MaxFileSize+1)},
		"svc/max.json":  {Data: bytes.Repeat([]byte(" "), MaxFileSize)},
		"svc/pipe.json": {Mode: fs.ModeNamedPipe},
		"svc/dir.json":  {Mode: fs.ModeDir},
	}
	l = NewLoader(src)
	if _, err := l.File("svc/big.json"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file of MaxFileSize+1 bytes: %v, want ErrTooLarge", err)
	}
	if data, err := l.File("svc/max.json"); err != nil || len(data) != MaxFileSize {
		t.Errorf("a file of MaxFileSize bytes: %d bytes, %v", len(data), err)
	}
	for _, name := range []string{"svc/pipe.json", "svc/dir.json"} {
		if _, err := l.File(name); !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: %v, want ErrNotRegular", name, err)
		}
	}
	// The answer Files keeps is the refusal.
	if _, err := fs.ReadFile(l.Files(), "svc/big.json"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Files' answer for the large file: %v", err)
	}
}

// opens is a file system that records every name opened or stated.
type opens struct {
	fstest.MapFS
	names []string
}

func (o *opens) Open(name string) (fs.File, error) {
	o.names = append(o.names, name)
	return o.MapFS.Open(name)
}

func (o *opens) Stat(name string) (fs.FileInfo, error) {
	o.names = append(o.names, name)
	return o.MapFS.Stat(name)
}

// A manifest imported from a module reads only the module's files: a
// schema: that climbs out or is absolute, a $ref that climbs out and a
// manifest: that climbs out are refused, and the file outside is never
// opened; the service's own manifest may still name files anywhere.
func TestModuleImportStaysInTheModule(t *testing.T) {
	src := &opens{MapFS: fstest.MapFS{
		"srv/billing/acemq.yaml": {Data: []byte(`version: 1
package: billing
messages:
  Own: {type: own.v1, schema: /srv/shared/own.json}
imports:
  - {module: github.com/acme/orders, manifest: deploy/acemq.yaml}
  - {module: github.com/acme/orders, manifest: ../../secret/acemq.yaml}
`)},
		"srv/shared/own.json": {Data: []byte(`{"type": "string"}`)},
		"mod/orders/deploy/acemq.yaml": {Data: []byte(`version: 1
package: orders
messages:
  In: {type: in.v1, schema: schemas/in.json}
  Climb: {type: climb.v1, schema: ../../../secret/a.json}
  Absolute: {type: absolute.v1, schema: /secret/b.json}
`)},
		"mod/orders/deploy/schemas/in.json": {Data: []byte(`{"$ref": "../../../../secret/c.json"}`)},
		"secret/a.json":                     {Data: []byte(`{"description": "TOP SECRET"}`)},
		"secret/b.json":                     {Data: []byte(`{"description": "TOP SECRET"}`)},
		"secret/c.json":                     {Data: []byte(`{"description": "TOP SECRET"}`)},
		"secret/acemq.yaml":                 {Data: []byte("version: 1\npackage: secret\n")},
	}}
	mods := func(from, module, version string) (string, string, error) { return "mod/orders", "v1.0.0", nil }
	s, err := load(src, "srv/billing/acemq.yaml", "srv/billing/acemq.yaml", mods)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range src.names {
		if strings.HasPrefix(name, "secret/") {
			t.Errorf("%s was opened for the module", name)
		}
	}
	for _, name := range []string{"secret/a.json", "secret/b.json", "secret/c.json"} {
		if _, err := fs.ReadFile(s.FS, name); !errors.Is(err, ErrOutsideModule) {
			t.Errorf("Files' answer for %s: %v, want ErrOutsideModule", name, err)
		}
	}
	if _, err := fs.ReadFile(s.FS, "srv/shared/own.json"); err != nil {
		t.Errorf("the service's own absolute schema: %v", err)
	}
	if len(s.Imports) != 2 || s.Imports[0].Err != nil || s.Imports[0].Root != "mod/orders" {
		t.Fatalf("imports[0]: %+v", s.Imports[0])
	}
	if err := s.Imports[1].Err; !errors.Is(err, ErrOutsideModule) || !strings.Contains(err.Error(), "github.com/acme/orders") {
		t.Errorf("a manifest: climbing out: %v, want ErrOutsideModule naming the module", err)
	}
	if !slices.Contains(s.FS.Names(), "mod/orders/deploy/schemas/in.json") {
		t.Errorf("the module's own schema was not read: %q", s.FS.Names())
	}
}

// A symlink in a module that points out of it is refused (OS).
func TestModuleSymlinkOut(t *testing.T) {
	dir := t.TempDir()
	for p, data := range map[string]string{
		"mod/acemq.yaml":      "version: 1\npackage: m\nmessages:\n  L: {type: l.v1, schema: link.json}\n  I: {type: i.v1, schema: in.json}\n",
		"mod/in.json":         `{"type": "string"}`,
		"outside/secret.json": `{"description": "TOP SECRET"}`,
		"svc/acemq.yaml":      "version: 1\npackage: svc\nimports:\n  - {module: example.com/m}\n",
	} {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "outside", "secret.json"), filepath.Join(dir, "mod", "link.json")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	root, err := Name(filepath.Join(dir, "mod"))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := Name(filepath.Join(dir, "svc", "acemq.yaml"))
	s, err := load(OS(), svc, "svc/acemq.yaml", func(string, string, string) (string, string, error) { return root, "", nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.ReadFile(s.FS, root+"/link.json"); !errors.Is(err, ErrOutsideModule) {
		t.Errorf("the symlink out of the module: %v, want ErrOutsideModule", err)
	}
	if _, err := fs.ReadFile(s.FS, root+"/in.json"); err != nil {
		t.Errorf("the module's own file: %v", err)
	}
}
