package doccheck

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingAnchors are the anchors GitHub gives a Markdown file's headings:
// the text lower-cased, punctuation but '-' and '_' dropped, spaces made
// '-', a repeated one suffixed -1, -2 …; fenced blocks are not headings.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return anchors
}

// TestRelativeLinksResolve: every relative link of README.md, docs/*.md,
// bench/*.md and examples/*/README.md names a file of the repository, and
// its #anchor, when it has one, a heading of that file. Moving a page's
// sections elsewhere (docs/performance.md's passes to bench/NOTES.md,
// issue 38) must move the links with them.
func TestRelativeLinksResolve(t *testing.T) {
	root := moduleRoot(t)
	var files []string
	for _, g := range []string{"README.md", "docs/*.md", "bench/*.md", "examples/*/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	anchors := map[string]map[string]bool{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, file)
		fenced := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
			}
			if fenced {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: link %s: no such file", rel, i+1, target)
					continue
				}
				if anchor == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if anchors[dest] == nil {
					anchors[dest] = headingAnchors(t, dest)
				}
				if !anchors[dest][anchor] {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", rel, i+1, target, filepath.Base(dest), anchor)
				}
			}
		}
	}
}

// TestPerformancePageIsAUserPage: docs/performance.md is the page a user
// reads (what to expect, the figures and their run, how to measure, how to
// tune), at most 300 lines (issue 38 item 6); the passes' diary is
// bench/NOTES.md.
func TestPerformancePageIsAUserPage(t *testing.T) {
	root := moduleRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 300 {
		t.Errorf("docs/performance.md has %d lines, want at most 300 (the passes' notes go to bench/NOTES.md)", n)
	}
	for _, section := range []string{"## What to expect", "## The figures", "## Measuring your own", "## Tuning"} {
		if !strings.Contains(string(data), "\n"+section) {
			t.Errorf("docs/performance.md has no section %q", section)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "bench", "NOTES.md")); err != nil {
		t.Errorf("the passes' notes: %v", err)
	}
}
