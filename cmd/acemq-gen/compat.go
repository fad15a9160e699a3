package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/compat"
	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/model"
)

const compatUsage = `usage:
  acemq-gen compat -f acemq.yaml --against DIR|FILE|git:REF
compares every message schema with its previous version: DIR holds the
previous manifest (same file name) and its schemas; git:REF reads them from
commit REF of the manifest's repository. Each problem is one line on stdout:
message, field path, rule, the direction that breaks. Exit 0 compatible,
1 incompatible, 2 a bad manifest, schema or --against.
`

// Exit code of compat when a schema change breaks a reader.
const exitIncompatible = 1

// runCompat is acemq-gen compat.
func runCompat(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("acemq-gen compat", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	manifestPath := fl.String("f", "", "the manifest (acemq.yaml)")
	against := fl.String("against", "", "the previous version: DIR, FILE or git:REF")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, compatUsage)
			return exitOK
		}
		fmt.Fprintf(stderr, "acemq-gen compat: %v\n%s", err, compatUsage)
		return exitBad
	}
	switch {
	case fl.NArg() > 0:
		fmt.Fprintf(stderr, "acemq-gen compat: unexpected argument %q\n%s", fl.Arg(0), compatUsage)
		return exitBad
	case *manifestPath == "":
		fmt.Fprintf(stderr, "acemq-gen compat: -f is required: the manifest to check\n%s", compatUsage)
		return exitBad
	case *against == "":
		fmt.Fprintf(stderr, "acemq-gen compat: --against is required: the previous version (DIR, FILE or git:REF)\n%s", compatUsage)
		return exitBad
	}
	cur, err := build(input.LoadFile(*manifestPath))
	if err != nil {
		printErr(stderr, err)
		return exitBad
	}
	prev, err := build(input.LoadPrevious(*manifestPath, *against))
	if err != nil {
		if errors.Is(err, input.ErrPrevious) {
			fmt.Fprintf(stderr, "acemq-gen compat: %v\n", err) // it says "the previous version: ..."
		} else {
			fmt.Fprintf(stderr, "acemq-gen compat: the previous version (%s): %v\n", *against, err)
		}
		return exitBad
	}
	rep, err := compat.Compare(prev, cur)
	if err != nil {
		fmt.Fprintf(stderr, "acemq-gen compat: %v\n", err)
		return exitBad
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(stdout, n)
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(stdout, p)
	}
	if !rep.Compatible() {
		fmt.Fprintf(stderr, "acemq-gen compat: %s\n", count(rep))
		return exitIncompatible
	}
	fmt.Fprintf(stdout, "compatible: %s against %s\n", checked(rep), *against)
	return exitOK
}

// checked is "3 messages checked (full 2, backward 1)".
func checked(rep *compat.Report) string {
	n, modes := 0, []string{}
	for _, m := range []compat.Mode{compat.ModeFull, compat.ModeBackward, compat.ModeForward} {
		if k := rep.Checked[m]; k > 0 {
			n += k
			modes = append(modes, fmt.Sprintf("%s %d", m, k))
		}
	}
	if n == 0 {
		return "no message checked"
	}
	return fmt.Sprintf("%d %s checked (%s)", n, plural(n, "message", "messages"), strings.Join(modes, ", "))
}

// build is the model of what internal/gen/input read (the only stage that
// reads files: compat compares what it is given).
func build(s *input.Set, err error) (*model.Model, error) {
	if err != nil {
		return nil, err
	}
	return compat.Build(s)
}

// count is "1 change breaks readers (in 1 message)" or "3 changes break
// readers (in 2 messages)".
func count(rep *compat.Report) string {
	msgs := map[string]bool{}
	for _, p := range rep.Problems {
		msgs[p.Message] = true
	}
	return fmt.Sprintf("%d %s readers (in %d %s)", len(rep.Problems), plural(len(rep.Problems), "change breaks", "changes break"),
		len(msgs), plural(len(msgs), "message", "messages"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
