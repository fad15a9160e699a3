package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Parse reads the manifest in data; path names it in errors. It returns
// every problem at once as Errors. When the YAML parses but breaks the
// manifest schema, Parse returns, beside the Errors, the tree decoded as far
// as it goes (a value of the wrong type reads as its zero value), so that
// problems of meaning can be reported in the same run; a caller must not
// generate from it.
func Parse(path string, data []byte) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, Errors{yamlError(path, data, err)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, Errors{{File: path, Msg: "the manifest is empty; it needs at least version: 1 and package:"}}
	}
	if e := secondDocument(path, data, doc.Content[0].Line); e != nil {
		return nil, Errors{e}
	}
	root := doc.Content[0]
	t := &tree{file: path, locs: map[string]loc{}, active: map[*yaml.Node]bool{}, limit: written(root) + maxNodes}
	value := t.convert(root, nil, nil)
	if len(t.errs) == 0 {
		t.validate(value)
	}
	if len(t.errs) > 0 {
		if root.Kind != yaml.MappingNode {
			return nil, t.errs.Sorted()
		}
		return decodeFile(path, root), t.errs.Sorted()
	}
	return decodeFile(path, root), nil
}

// tree converts a YAML node tree into plain values for the JSON Schema
// validator, remembering where each value was written.
type tree struct {
	file string
	locs map[string]loc // by instance location, joined with "\x00"
	errs Errors

	active map[*yaml.Node]bool // the nodes being converted, to catch an alias of an ancestor
	nodes  int                 // nodes converted, to stop alias bombs
	limit  int                 // nodes the manifest may convert to
}

// maxNodes bounds the values that aliases may add to a manifest, beyond
// those written out: a large manifest written plainly is never refused.
const maxNodes = 100_000

// written counts the nodes of the tree under n as written, an alias
// counting as one.
func written(n *yaml.Node) int {
	c := 1
	if n.Kind != yaml.AliasNode {
		for _, k := range n.Content {
			c += written(k)
		}
	}
	return c
}

// loc is where a value was written: its key (nil for the root and for
// sequence items) and the value itself.
type loc struct {
	key, val *yaml.Node
}

func (t *tree) errorf(n *yaml.Node, format string, args ...any) {
	t.errs = append(t.errs, &Error{File: t.file, Pos: posOf(n), Msg: fmt.Sprintf(format, args...)})
}

func posOf(n *yaml.Node) Pos {
	if n == nil {
		return Pos{}
	}
	return Pos{Line: n.Line, Col: n.Column}
}

func (t *tree) convert(n *yaml.Node, key *yaml.Node, path []string) any {
	alias := n
	n = resolveAlias(n)
	if t.active[n] {
		t.errorf(alias, "this alias refers to a value that contains it; write the value out")
		return nil
	}
	if t.nodes++; t.nodes > t.limit {
		if t.nodes == t.limit+1 {
			t.errorf(alias, "its aliases expand the manifest by more than %d values; write it out plainly, or use fewer aliases", maxNodes)
		}
		return nil
	}
	t.active[n] = true
	defer delete(t.active, n)
	t.locs[strings.Join(path, "\x00")] = loc{key: key, val: n}
	switch n.Kind {
	case yaml.MappingNode:
		return t.convertMapping(n, path)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			out = append(out, t.convert(c, nil, append(path, strconv.Itoa(i))))
		}
		return out
	case yaml.ScalarNode:
		v := scalar(n)
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			t.errorf(n, "%s %s is not a number JSON can hold (NaN or infinity); write a finite number, like 0.2", orManifest(label(path)), n.Value)
			return 0.0
		}
		return v
	}
	t.errorf(n, "unexpected YAML node")
	return nil
}

func (t *tree) convertMapping(n *yaml.Node, path []string) map[string]any {
	out := map[string]any{}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolveAlias(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			t.errorf(k, "a key must be a plain string")
			continue
		}
		if k.Tag == "!!merge" {
			t.errorf(k, "merge keys (<<) are not supported; write the keys out")
			continue
		}
		if first, dup := seen[k.Value]; dup {
			t.errorf(k, "duplicate key %q (first at line %d); keep one", k.Value, first.Line)
			continue
		}
		seen[k.Value] = k
		out[k.Value] = t.convert(v, k, append(path[:len(path):len(path)], k.Value))
	}
	return out
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// scalar is the plain value of a scalar node, typed as YAML 1.2's core
// schema resolves it: int64, float64, bool, nil or string.
func scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!int":
		var v int64
		if n.Decode(&v) == nil {
			return v
		}
	case "!!float":
		var v float64
		if n.Decode(&v) == nil {
			return v
		}
	case "!!bool":
		var v bool
		if n.Decode(&v) == nil {
			return v
		}
	case "!!null":
		return nil
	}
	return n.Value
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a YAML syntax error into an Error near the line where
// the problem is, with a hint. The YAML library names the line where the
// enclosing block or collection starts, often lines above the problem; the
// error is put instead at problemLine's estimate.
func yamlError(path string, data []byte, err error) *Error {
	msg := err.Error()
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return &Error{File: path, Msg: strings.Replace(msg, "yaml: ", "YAML syntax error: ", 1) + yamlHint(msg)}
	}
	line, _ := strconv.Atoi(m[1])
	line = firstChildShifted(data, problemLine(data, line))
	return &Error{File: path, Pos: Pos{Line: line}, Msg: "YAML syntax error near this line: " + m[2] + yamlHint(m[2])}
}

// maxPrefixParses bounds the parses problemLine may spend.
const maxPrefixParses = 300

// problemLine estimates the line of a syntax error that the YAML library
// puts at reported: the first line L (at or after reported) such that the
// manifest cut after any line from L on still fails to parse. Up to
// L-1, the text is the start of some valid YAML; from L on, no ending
// can save it: L holds the bad indent, or the [ { or " never closed. When
// that takes too many parses, reported stays.
func problemLine(data []byte, reported int) int {
	ends := lineEnds(data)
	if reported < 1 || reported > len(ends) || len(ends)-reported > maxPrefixParses {
		return reported
	}
	for k := len(ends) - 1; k >= reported; k-- {
		var n yaml.Node
		if yaml.Unmarshal(data[:ends[k-1]], &n) == nil {
			return k + 1
		}
	}
	return reported
}

// firstChildShifted moves a syntax error at line to the line before it
// when that one is the first entry of its block and the one out of step:
// the first entry sets the block's column, so the YAML library sees the
// problem at the second entry (it is indented as the file's other blocks,
// the first is not).
func firstChildShifted(data []byte, line int) int {
	lines := strings.Split(string(data), "\n")
	if line < 3 || line > len(lines) {
		return line
	}
	parent, first, at := lines[line-3], lines[line-2], lines[line-1]
	step := indentStep(lines, line-2, line-1)
	pi, fi, ai := indent(parent), indent(first), indent(at)
	if step == 0 || !strings.HasSuffix(strings.TrimSpace(parent), ":") || strings.TrimSpace(first) == "" ||
		(strings.HasSuffix(strings.TrimSpace(first), ":") && ai > fi) {
		// Not the first entry of a block followed by a sibling: at may
		// be first's own child.
		return line
	}
	if fi > pi && fi != ai && ai == pi+step && fi != pi+step {
		return line - 1
	}
	return line
}

// indentStep is the smallest indentation of the file's lines but the
// two suspects (comments and blank lines aside): its usual step.
func indentStep(lines []string, suspect, other int) int {
	step := 0
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if i == suspect || i == other || t == "" || strings.HasPrefix(t, "#") || indent(l) == 0 {
			continue
		}
		if step == 0 || indent(l) < step {
			step = indent(l)
		}
	}
	return step
}

func indent(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// lineEnds is the offset just past each line of data (its newline
// included).
func lineEnds(data []byte) []int {
	var ends []int
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, len(data))
	}
	return ends
}

// yamlHint is what to check for a YAML syntax error message.
func yamlHint(msg string) string {
	switch {
	case strings.Contains(msg, "cannot start any token"):
		return "; a tab, @ or ` cannot start a value: indent with spaces, and quote a value that starts with @ or `"
	case strings.Contains(msg, "tab character"):
		return "; indent with spaces, not tabs"
	case strings.Contains(msg, "expected ',' or '}'"):
		return "; close the { of this flow mapping, and separate its entries with commas"
	case strings.Contains(msg, "expected ',' or ']'"):
		return "; close the [ of this list, and separate its items with commas"
	case strings.Contains(msg, "end of stream"), strings.Contains(msg, "quoted scalar"):
		return "; close the quoted string (\" or ') opened here"
	case strings.Contains(msg, "expected key"), strings.Contains(msg, "mapping values are not allowed"),
		strings.Contains(msg, "block end"), strings.Contains(msg, "block collection"):
		return "; check the indentation: the keys of one mapping start in the same column (spaces only), " +
			"and a value with a colon and a space in it needs quotes"
	}
	return "; check the indentation, the quotes and the brackets of this line and the one before"
}

// secondDocument refuses a YAML stream of more than one document (a ---
// after the manifest), which would otherwise be ignored, at the line of
// the --- that starts it. firstLine is the line of the first document's
// root value.
func secondDocument(path string, data []byte, firstLine int) *Error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first, second yaml.Node
	if dec.Decode(&first) != nil {
		return nil
	}
	err := dec.Decode(&second)
	if errors.Is(err, io.EOF) {
		return nil
	}
	line := 0
	for i, l := range bytes.Split(data, []byte("\n")) {
		if i+1 > firstLine && docStart.Match(l) {
			line = i + 1
			break
		}
	}
	if line == 0 && err == nil && len(second.Content) > 0 {
		line = second.Content[0].Line
	}
	return &Error{File: path, Pos: Pos{Line: line}, Msg: "a second YAML document (---) starts here; a manifest is one document: " +
		"remove the --- and merge its keys into the manifest, or move it to a manifest of its own"}
}

// docStart is a line that starts a YAML document.
var docStart = regexp.MustCompile(`^---([ \t].*)?\r?$`)
