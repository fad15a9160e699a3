package model

import (
	"fmt"
	"io/fs"
	"slices"

	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/internal/gen/names"
)

// Build resolves f. It reads the schema files from fsys, where dir is the
// directory schema paths are relative to (the manifest's; see
// internal/gen/input: an absolute path is a name from fsys's root), and does
// no other I/O. imports are the manifests f's imports: names, as input
// read them (into fsys too). Every problem is returned at once as
// manifest.Errors.
func Build(f *manifest.File, fsys fs.FS, dir string, imports ...*input.Imported) (*Model, error) {
	b := &builder{file: f, fsys: fsys, dir: dir, m: &Model{Source: f.Path, Package: f.Package.Value}, names: nameRules(f.Names)}
	b.ns = &namespace{b: b, taken: map[string]claim{}}
	b.ns.claim("Topology", "the Topology function", manifest.Pos{})
	b.checkPackage()
	b.registry()
	b.policies()
	b.messages()
	b.importDecls(imports)
	b.importedMessages()
	b.replies()
	b.exchanges()
	b.importedExchanges()
	b.queues()
	b.publishers()
	b.exports()
	b.tablePrefix()
	b.delayLevels()
	if len(b.errs) == 0 {
		// Types are mapped only once every name of the manifest is settled,
		// so that no schema type takes one. The codecs last, and only of
		// the messages whose schema the mapper took, so that a construct it
		// refuses is reported by it, at its pointer, rather than as the
		// runtime's compile error; every other message's is still checked.
		if refused, ok := b.types(); ok {
			b.codecs(refused)
		}
	}
	if len(b.errs) > 0 {
		return nil, b.errs.Sorted()
	}
	return b.m, nil
}

type builder struct {
	file *manifest.File
	fsys fs.FS  // the schema files (and their $refs), read by internal/gen/input
	dir  string // the manifest's directory in fsys
	m    *Model
	ns   *namespace
	// names makes every Go name of the model and of its types.
	names *names.Rules
	errs  manifest.Errors

	policyByName   map[string]*Policy
	messageByName  map[string]*Message
	exchangeByName map[string]*Exchange
	messagePos     map[*Message]site            // schema: value, for schema errors
	byType         map[string]typeClaim         // the message of each AMQP type
	ids            map[string]map[string]string // by manifest directory: absolute $id → JSON Schema file, see schemaIDs
	// offered are the messages and exchanges of the manifests imports:
	// names, by name (see importDecls).
	offered          map[string]*importedMessage
	offeredExchanges map[string]*importedExchange
	importFailed     bool // an import could not be read: a name unknown here may be its
}

func (b *builder) errorf(pos manifest.Pos, format string, args ...any) {
	b.errorIn(b.file.Path, pos, format, args...)
}

// errorIn is an error at pos of the manifest file (this one, or one it
// imports).
func (b *builder) errorIn(file string, pos manifest.Pos, format string, args ...any) {
	b.errs = append(b.errs, &manifest.Error{File: file, Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// checkPackage refuses a package name that is a Go keyword, or the blank
// identifier (go vet: invalid package name _).
func (b *builder) checkPackage() {
	switch name := b.file.Package.Value; {
	case isKeyword(name):
		b.errorf(b.file.Package.Pos, "package %q is a Go keyword; choose another package name", name)
	case name == "_":
		b.errorf(b.file.Package.Pos, "package \"_\" is the blank identifier, which cannot name a package; choose another package name")
	}
}

func isKeyword(s string) bool {
	return slices.Contains([]string{"break", "case", "chan", "const", "continue", "default", "defer", "else",
		"fallthrough", "for", "func", "go", "goto", "if", "import", "interface", "map", "package", "range",
		"return", "select", "struct", "switch", "type", "var"}, s)
}

// unknown is the tail of an error about a reference to a name that does
// not exist: ", which no <kind> declares (did you mean "x"?)".
func unknown(kind, section string, name string, known []string) string {
	if s := manifest.DidYouMean(name, known); s != "" {
		return fmt.Sprintf(", which no %s declares%s", kind, s)
	}
	if len(known) == 0 {
		return fmt.Sprintf(", which no %s declares (the manifest has no %s:)", kind, section)
	}
	return fmt.Sprintf(", which no %s declares; declared: %s", kind, joinQuoted(known))
}

func joinQuoted(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", n)
	}
	return out
}

// tablePrefix is table_prefix: (its form checked by the manifest's schema),
// which only a service with an inbox: queue or an outbox: publisher has a
// use for.
func (b *builder) tablePrefix() {
	tp := b.file.TablePrefix
	if tp == nil {
		return
	}
	inbox := false
	for _, q := range b.m.Queues {
		inbox = inbox || q.Inbox != nil
	}
	if !inbox && !b.m.HasOutbox() {
		b.errorf(tp.Pos, "table_prefix %q: no queue has an inbox: and no publisher an outbox:, so no table has it", tp.Value)
		return
	}
	if b.ns.claim("TablePrefix", "the TablePrefix constant (table_prefix:)", tp.Pos) {
		b.m.TablePrefix = tp.Value
	}
}
