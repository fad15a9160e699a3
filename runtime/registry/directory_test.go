package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acemq/acemq-go/runtime"
)

func TestDirectoryRegistryIDsSurviveARestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r1, _ := NewDirectory(dir)
	id1, err := r1.Register(ctx, "orders", codecOrderV1)
	if err != nil {
		t.Fatal(err)
	}
	id2, _ := r1.Register(ctx, "orders", codecOrderV2)
	idOther, _ := r1.Register(ctx, "archive", codecOrderV1)
	if want, _ := SchemaID(codecOrderV1); id1 != want || idOther != id1 {
		t.Fatalf("v1 id %d (archive %d), SchemaID %d", id1, idOther, want)
	}
	r2, _ := NewDirectory(dir) // a restart, or another process
	if id, _ := r2.Register(ctx, "orders", codecOrderV2); id != id2 {
		t.Fatalf("v2 after a restart: %d, want %d", id, id2)
	}
	if text, err := r2.Schema(ctx, id1); err != nil || text != codecOrderV1 {
		t.Fatalf("Schema(%d) after a restart: %q, %v", id1, text, err)
	}
	entries, err := r2.Index()
	if err != nil {
		t.Fatal(err)
	}
	want := []DirectoryEntry{{"orders", 1, id1, ""}, {"orders", 2, id2, ""}, {"archive", 1, id1, ""}}
	if len(entries) != len(want) {
		t.Fatalf("index: %+v", entries)
	}
	for i, e := range entries {
		if e.Subject != want[i].Subject || e.Version != want[i].Version || e.ID != want[i].ID || !strings.HasPrefix(e.Fingerprint, "sha256:") {
			t.Fatalf("index entry %d: %+v, want %+v", i, e, want[i])
		}
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%d.avsc", id2))); err != nil {
		t.Fatalf("schema file: %v", err)
	}
}

// A schema whose derived id is taken in the index by another schema gets
// the next free id, kept by the index.
func TestDirectoryRegistryCollisionTakesTheNextID(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	id, _ := SchemaID(codecOrderV1)
	idx, _ := json.Marshal(directoryIndex{Schemas: []DirectoryEntry{{Subject: "x", Version: 1, ID: id, Fingerprint: "sha256:other"}}})
	if err := os.WriteFile(filepath.Join(dir, DirectoryIndexFile), idx, 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ := NewDirectory(dir)
	got, err := r.Register(ctx, "orders", codecOrderV1)
	if err != nil || got != id+1 {
		t.Fatalf("Register: %d, %v; want %d", got, err, id+1)
	}
	if again, _ := NewDirectory(dir); again != nil {
		if got2, _ := again.Register(ctx, "orders", codecOrderV1); got2 != id+1 {
			t.Fatalf("after a restart: %d", got2)
		}
	}
}

func TestDirectoryRegistryErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r, _ := NewDirectory(dir)
	if _, err := r.Schema(ctx, 77); !errors.Is(err, runtime.ErrSchemaNotFound) || !strings.Contains(err.Error(), "schema id 77: acemq: schema not found in "+dir) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, DirectoryIndexFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(ctx, "orders", codecOrderV1); err == nil || !strings.Contains(err.Error(), "is not a registry index") {
		t.Fatalf("garbled index: %v", err)
	}
	if _, err := NewDirectory(""); err == nil {
		t.Fatal("no directory: no error")
	}
}

// registerHelperEnv makes the test binary a helper process that registers
// schemas in a directory registry (TestDirectoryRegistryConcurrentProcesses).
const registerHelperEnv = "ACEMQ_TEST_REGISTER_HELPER"

func TestDirectoryRegistryHelperProcess(t *testing.T) {
	dir := os.Getenv(registerHelperEnv)
	if dir == "" {
		t.Skip("only runs as a helper process of TestDirectoryRegistryConcurrentProcesses")
	}
	r, err := NewDirectory(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := range 20 {
		s := fmt.Sprintf(`{"type":"record","name":"R%d","fields":[{"name":"a","type":"string"}]}`, i)
		id, err := r.Register(context.Background(), fmt.Sprintf("s%d", i%3), s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(id))
	}
	fmt.Println("IDS", strings.Join(out, ","))
}

// Four processes (and, in each, the registry's own lock) register the same
// twenty schemas at once: every process sees the same ids, and the index
// holds each registration exactly once.
func TestDirectoryRegistryConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	const procs = 4
	outs := make([]string, procs)
	var wg sync.WaitGroup
	for p := range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestDirectoryRegistryHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), registerHelperEnv+"="+dir)
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("helper %d: %v\n%s", p, err, b)
			}
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, "IDS ") {
					outs[p] = line
				}
			}
		})
	}
	// And goroutines of this process, at the same time.
	r, _ := NewDirectory(dir)
	for i := range 20 {
		wg.Go(func() {
			s := fmt.Sprintf(`{"type":"record","name":"R%d","fields":[{"name":"a","type":"string"}]}`, i)
			if _, err := r.Register(context.Background(), fmt.Sprintf("s%d", i%3), s); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for p := range procs {
		if outs[p] == "" || outs[p] != outs[0] {
			t.Fatalf("helper %d saw %q, helper 0 %q", p, outs[p], outs[0])
		}
	}
	entries, err := r.Index()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 20 {
		t.Fatalf("the index holds %d registrations, want 20 (one per schema): %+v", len(entries), entries)
	}
	versions := map[string]map[int]bool{}
	for _, e := range entries {
		if versions[e.Subject] == nil {
			versions[e.Subject] = map[int]bool{}
		}
		if versions[e.Subject][e.Version] {
			t.Fatalf("subject %s has version %d twice", e.Subject, e.Version)
		}
		versions[e.Subject][e.Version] = true
	}
}
