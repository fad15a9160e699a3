package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/schemareg"
)

// DirectoryIndexFile is the name of a Directory's index.
const DirectoryIndexFile = "index.json"

// Directory is a runtime.SchemaRegistry kept in a directory that several
// processes share (a volume, a repository checkout): one file per schema,
// <id>.avsc, holding the text first registered, and index.json, which
// records for each registration its subject, version (1, 2, … per subject)
// and id, and the schema's fingerprint:
//
//	{"schemas": [
//	  {"subject": "orders", "version": 1, "id": 1169958963, "fingerprint": "sha256:…"}
//	]}
//
// Ids are those SchemaID derives from the canonical form, so a
// Directory, the default Fingerprint registry and `acemq-gen
// registry` agree; when two schemas of one index would share an id the
// newcomer takes the next free one, and the index keeps it for good. Ids
// are stable across restarts: the index is the record. Like a Confluent
// registry, an id names a schema, not a subject.
//
// Two processes registering at once are safe: Register holds an exclusive
// lock on <dir>/.lock (flock on Unix) while it reads and rewrites the
// index, and every file is written to a temporary name and renamed into
// place, so a reader never sees half a file. Schema reads <id>.avsc without
// the lock and caches what it read. Safe for concurrent use.
type Directory struct {
	dir string

	mu    sync.Mutex // one registration of this process at a time
	texts sync.Map   // id → schema text
	ids   sync.Map   // subject + "\x00" + fingerprint → id
}

// DirectoryEntry is one registration in a Directory's index.
type DirectoryEntry struct {
	Subject     string `json:"subject"`
	Version     int    `json:"version"`
	ID          int    `json:"id"`
	Fingerprint string `json:"fingerprint"`
}

type directoryIndex struct {
	Schemas []DirectoryEntry `json:"schemas"`
}

// NewDirectory returns the registry kept in dir, creating dir when
// it does not exist.
func NewDirectory(dir string) (*Directory, error) {
	if dir == "" {
		return nil, errors.New("directory registry: no directory named")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("directory registry: %w", err)
	}
	return &Directory{dir: dir}, nil
}

// Dir is the registry's directory.
func (r *Directory) Dir() string { return r.dir }

// Register stores schema under subject and returns its id: the id already
// in the index for the same schema (any subject), else a new one. ctx
// bounds the wait for the lock. A schema that does not parse is an error;
// a file that cannot be read or written is one wrapping
// runtime.ErrRegistryUnavailable.
func (r *Directory) Register(ctx context.Context, subject, schema string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("register schema under subject %q: %w", subject, err)
	}
	parsed, err := schemareg.Parse(schema)
	if err != nil {
		return 0, fmt.Errorf("register schema under subject %q: %w", subject, err)
	}
	print := schemareg.FingerprintText(parsed)
	key := subject + "\x00" + print
	if id, ok := r.ids.Load(key); ok {
		return id.(int), nil
	}
	id, err := r.register(ctx, subject, schema, print, schemareg.ID(parsed.Fingerprint()))
	if err != nil {
		return 0, fmt.Errorf("register schema under subject %q in %s: %w", subject, r.dir, err)
	}
	r.ids.Store(key, id)
	return id, nil
}

func (r *Directory) register(ctx context.Context, subject, schema, print string, preferred int) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	unlock, err := lockFile(ctx, filepath.Join(r.dir, ".lock"))
	if err != nil {
		return 0, err
	}
	defer unlock()
	idx, err := r.readIndex()
	if err != nil {
		return 0, err
	}
	id, version, taken := 0, 0, map[int]bool{}
	for _, e := range idx.Schemas {
		if e.Fingerprint == print {
			id = e.ID
			if e.Subject == subject {
				return id, nil
			}
		} else {
			taken[e.ID] = true
		}
		if e.Subject == subject {
			version = max(version, e.Version)
		}
	}
	if id == 0 {
		id = preferred
		for taken[id] {
			id = id%(1<<31-1) + 1
		}
		if err := writeFileAtomic(r.schemaPath(id), []byte(schema)); err != nil {
			return 0, err
		}
	}
	idx.Schemas = append(idx.Schemas, DirectoryEntry{Subject: subject, Version: version + 1, ID: id, Fingerprint: print})
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return 0, err
	}
	if err := writeFileAtomic(filepath.Join(r.dir, DirectoryIndexFile), append(b, '\n')); err != nil {
		return 0, err
	}
	return id, nil
}

// Schema returns the text of the schema with id, or an error wrapping
// runtime.ErrSchemaNotFound; a file that cannot be read is an error wrapping
// runtime.ErrRegistryUnavailable. ctx is checked before the lookup.
func (r *Directory) Schema(ctx context.Context, id int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("schema %d: %w", id, err)
	}
	if text, ok := r.texts.Load(id); ok {
		return text.(string), nil
	}
	if id < 1 {
		return "", fmt.Errorf("schema id %d: %w", id, runtime.ErrSchemaNotFound)
	}
	b, err := os.ReadFile(r.schemaPath(id))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("schema id %d: %w in %s", id, runtime.ErrSchemaNotFound, r.dir)
	case err != nil:
		return "", fmt.Errorf("schema id %d: %w: %w", id, runtime.ErrRegistryUnavailable, err)
	}
	r.texts.Store(id, string(b))
	return string(b), nil
}

// Index returns the registrations in the index, in the order made.
func (r *Directory) Index() ([]DirectoryEntry, error) {
	idx, err := r.readIndex()
	return idx.Schemas, err
}

func (r *Directory) schemaPath(id int) string {
	return filepath.Join(r.dir, strconv.Itoa(id)+".avsc")
}

func (r *Directory) readIndex() (directoryIndex, error) {
	var idx directoryIndex
	path := filepath.Join(r.dir, DirectoryIndexFile)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return idx, nil
	case err != nil:
		return idx, fmt.Errorf("%w: %w", runtime.ErrRegistryUnavailable, err)
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return idx, fmt.Errorf("%s is not a registry index: %w", path, err)
	}
	return idx, nil
}

// writeFileAtomic writes b to a temporary file beside path, syncs it and
// renames it into place.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("%w: %w", runtime.ErrRegistryUnavailable, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("%w: %w", runtime.ErrRegistryUnavailable, err)
	}
	return nil
}

// lockPoll is how often a lock held by another process is tried again.
const lockPoll = 5 * time.Millisecond
