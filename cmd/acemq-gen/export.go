package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/export"
	"github.com/acemq/acemq-go/internal/gen/pipeline"
)

// runExport is acemq-gen export: the topology of a manifest as one of
// export.Formats, on stdout or into -o FILE.
func runExport(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("acemq-gen export", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	manifestPath := fl.String("f", "", "the manifest (acemq.yaml)")
	format := fl.String("format", "", "definitions, asyncapi, mermaid, dot or markdown")
	out := fl.String("o", "", "the file to write (default: stdout)")
	vhost := fl.String("vhost", "", "the virtual host the definitions and AsyncAPI bindings name (default /)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		fmt.Fprintf(stderr, "acemq-gen export: %v\n%s", err, usage)
		return exitBad
	}
	formats := strings.Join(export.Formats, ", ")
	switch {
	case fl.NArg() > 0:
		fmt.Fprintf(stderr, "acemq-gen export: unexpected argument %q\n%s", fl.Arg(0), usage)
		return exitBad
	case *manifestPath == "":
		fmt.Fprintf(stderr, "acemq-gen export: -f is required: the manifest to export\n%s", usage)
		return exitBad
	case *format == "":
		fmt.Fprintf(stderr, "acemq-gen export: --format is required: one of %s\n", formats)
		return exitBad
	case !export.Known(*format):
		fmt.Fprintf(stderr, "acemq-gen export: unknown --format %q: one of %s\n", *format, formats)
		return exitBad
	}
	m, err := pipeline.Load(*manifestPath)
	if err != nil {
		printErr(stderr, err)
		return exitBad
	}
	// The header names the manifest relative to the file written, or as
	// given on stdout.
	src := filepath.ToSlash(*manifestPath)
	if *out != "" {
		src = pipeline.Source(pipeline.Options{Manifest: *manifestPath, OutDir: filepath.Dir(*out)})
	}
	content, err := export.Render(m, *format, export.Options{Source: src, Vhost: *vhost})
	if err != nil {
		fmt.Fprintf(stderr, "acemq-gen export: %v\n", err)
		return exitBad
	}
	if *out == "" {
		if _, err := stdout.Write(content); err != nil {
			fmt.Fprintf(stderr, "acemq-gen export: %v\n", err)
			return exitBad
		}
		return exitOK
	}
	if err := writeFile(*out, content); err != nil {
		fmt.Fprintf(stderr, "acemq-gen export: %v\n", err)
		return exitBad
	}
	return exitOK
}
