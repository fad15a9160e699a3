// Command quickprofile reads `go test -json` on its standard input and
// says where the quick test's time went: each package's test time (its
// Elapsed, the binary's run alone, not its build), the slowest tests of the
// slowest packages, and the sum. `make quick-profile` runs it over make
// quick's packages; docs/development.md ("Figures") has what it found.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// event is one line of go test -json.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
}

type pkg struct {
	name    string
	action  string
	elapsed float64
	tests   []event
}

func main() {
	pkgs, err := read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickprofile:", err)
		os.Exit(2)
	}
	report(os.Stdout, pkgs, 12)
}

// read gathers the package and top-level test results of a go test -json
// stream; lines that are not JSON (a build error's text) are skipped.
func read(r io.Reader) ([]*pkg, error) {
	by := map[string]*pkg{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Package == "" {
			continue
		}
		p := by[e.Package]
		if p == nil {
			p = &pkg{name: e.Package}
			by[e.Package] = p
		}
		switch {
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			p.action, p.elapsed = e.Action, e.Elapsed
		case e.Test != "" && !strings.Contains(e.Test, "/") && (e.Action == "pass" || e.Action == "fail"):
			p.tests = append(p.tests, e)
		}
	}
	out := make([]*pkg, 0, len(by))
	for _, p := range by {
		if p.action != "" {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *pkg) int {
		if a.elapsed != b.elapsed {
			if a.elapsed > b.elapsed {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return out, sc.Err()
}

// report writes the n slowest packages, each with its three slowest
// tests, then the totals.
func report(w io.Writer, pkgs []*pkg, n int) {
	var sum float64
	ran, failed := 0, 0
	for _, p := range pkgs {
		sum += p.elapsed
		if p.action != "skip" {
			ran++
		}
		if p.action == "fail" {
			failed++
		}
	}
	for i, p := range pkgs {
		if i == n {
			break
		}
		slices.SortFunc(p.tests, func(a, b event) int {
			switch {
			case a.Elapsed > b.Elapsed:
				return -1
			case a.Elapsed < b.Elapsed:
				return 1
			}
			return strings.Compare(a.Test, b.Test)
		})
		var top []string
		for j, t := range p.tests {
			if j == 3 {
				break
			}
			top = append(top, fmt.Sprintf("%s %.1fs", t.Test, t.Elapsed))
		}
		fmt.Fprintf(w, "%6.1fs %-4s %s  %s\n", p.elapsed, p.action, p.name, strings.Join(top, ", "))
	}
	fmt.Fprintf(w, "%d packages (%d with tests, %d failed); their tests ran %.1fs in all (each binary's run, not its build)\n", len(pkgs), ran, failed, sum)
}
