package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/acemq/acemq-go/internal/gen/pipeline"
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/acemq/acemq-go/runtime/registry"
)

const registryUsage = `usage:
  acemq-gen registry -f acemq.yaml [-dir DIR] [-check]
registers every Avro message schema of the manifest under its subject in the
directory registry DIR (schema files and index.json, as runtime's
registry.Directory keeps them), so a service and its CI agree on ids; one line
per message on stdout. DIR defaults to the manifest's registry: directory
(relative to the current directory, as at run time). -check writes nothing
and exits 1 when a schema is not registered yet. Exit 2: a bad manifest or a
usage error.
`

// runRegistry is acemq-gen registry.
func runRegistry(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("acemq-gen registry", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	manifestPath := fl.String("f", "", "the manifest (acemq.yaml)")
	dir := fl.String("dir", "", "the directory registry (default: the manifest's registry: directory)")
	check := fl.Bool("check", false, "write nothing; exit 1 when a schema is not registered")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, registryUsage)
			return exitOK
		}
		fmt.Fprintf(stderr, "acemq-gen registry: %v\n%s", err, registryUsage)
		return exitBad
	}
	switch {
	case fl.NArg() > 0:
		fmt.Fprintf(stderr, "acemq-gen registry: unexpected argument %q\n%s", fl.Arg(0), registryUsage)
		return exitBad
	case *manifestPath == "":
		fmt.Fprintf(stderr, "acemq-gen registry: -f is required: the manifest whose schemas to register\n%s", registryUsage)
		return exitBad
	}
	m, err := pipeline.Load(*manifestPath)
	if err != nil {
		printErr(stderr, err)
		return exitBad
	}
	if *dir == "" && m.Registry != nil && m.Registry.Directory != "" {
		*dir = os.ExpandEnv(m.Registry.Directory)
	}
	if *dir == "" {
		fmt.Fprintf(stderr, "acemq-gen registry: -dir is required: the manifest has no registry: directory\n%s", registryUsage)
		return exitBad
	}
	reg, err := registry.NewDirectory(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "acemq-gen registry: %v\n", err)
		return exitBad
	}
	index, err := reg.Index()
	if err != nil {
		fmt.Fprintf(stderr, "acemq-gen registry: %v\n", err)
		return exitBad
	}
	missing := 0
	for _, msg := range m.Messages {
		if msg.Format != schema.Avro {
			continue
		}
		if *check {
			print, err := registry.SchemaFingerprint(msg.SchemaText)
			if err != nil {
				fmt.Fprintf(stderr, "acemq-gen registry: message %s: %v\n", msg.Name, err)
				return exitBad
			}
			if e, ok := find(index, msg.Subject, print); ok {
				fmt.Fprintf(stdout, "%s: subject %s, version %d, id %d\n", msg.Name, e.Subject, e.Version, e.ID)
			} else {
				missing++
				fmt.Fprintf(stdout, "%s: subject %s: not registered in %s (run acemq-gen registry -f %s -dir %s)\n",
					msg.Name, msg.Subject, filepath.Join(*dir, registry.DirectoryIndexFile), *manifestPath, *dir)
			}
			continue
		}
		id, err := reg.Register(context.Background(), msg.Subject, msg.SchemaText)
		if err != nil {
			fmt.Fprintf(stderr, "acemq-gen registry: message %s: %v\n", msg.Name, err)
			return exitBad
		}
		index, _ = reg.Index()
		print, _ := registry.SchemaFingerprint(msg.SchemaText)
		e, _ := find(index, msg.Subject, print)
		fmt.Fprintf(stdout, "%s: subject %s, version %d, id %d\n", msg.Name, msg.Subject, e.Version, id)
	}
	if missing > 0 {
		fmt.Fprintf(stderr, "acemq-gen registry: %d %s not registered\n", missing, plural(missing, "schema is", "schemas are"))
		return exitStale
	}
	return exitOK
}

func find(index []registry.DirectoryEntry, subject, print string) (registry.DirectoryEntry, bool) {
	for _, e := range index {
		if e.Subject == subject && e.Fingerprint == print {
			return e, true
		}
	}
	return registry.DirectoryEntry{}, false
}
