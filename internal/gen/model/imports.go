package model

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/manifest"
)

// importSite is an entry of imports: that a message comes through.
type importSite struct {
	imp *input.Imported
	// pos is where this manifest takes the message: its item of the
	// entry's messages:, else the entry.
	pos   manifest.Pos
	index int // the entry's, in imports:
}

// importedMessage is a message another manifest declares, offered by an
// entry of imports:.
type importedMessage struct {
	decl   *manifest.Message
	site   *importSite
	broken bool // its manifest has errors: it is not built
}

// importedExchange is an exchange another manifest declares.
type importedExchange struct {
	decl *manifest.Exchange
	imp  *input.Imported
}

// importDecls reads the entries of imports: (input read the manifests
// they name): what each offers, each name once. Imports are not
// transitive: only the other manifest's own messages and exchanges.
func (b *builder) importDecls(list []*input.Imported) {
	b.offered = map[string]*importedMessage{}
	b.offeredExchanges = map[string]*importedExchange{}
	local := map[string]*manifest.Message{}
	for _, mm := range b.file.Messages {
		local[mm.Name.Value] = mm
	}
	localX := map[string]*manifest.Exchange{}
	for _, x := range b.file.Exchanges {
		localX[x.Name.Value] = x
	}
	for i, im := range list {
		e := im.Entry
		who := fmt.Sprintf("imports[%d]", i)
		switch {
		case e.Path != nil && e.Module != nil:
			b.errorf(e.Module.Pos, "%s: give path (a manifest beside this one) or module (a Go module's), not both", who)
			continue
		case e.Path == nil && e.Module == nil:
			b.errorf(e.Pos, "%s: give path (the other manifest, e.g. path: ../orders/acemq.yaml) or module (a Go module holding it, e.g. module: github.com/acme/orders)", who)
			continue
		case e.Path != nil && (e.Version != nil || e.Manifest != nil):
			at := e.Version
			if at == nil {
				at = e.Manifest
			}
			b.errorf(at.Pos, "%s: version and manifest are for a module: import; a path: names the manifest itself", who)
			continue
		}
		if im.Err != nil {
			b.importFailed = true
			at := e.Pos
			if e.Path != nil {
				at = e.Path.Pos
			} else if e.Module != nil {
				at = e.Module.Pos
			}
			if errors.Is(im.Err, fs.ErrNotExist) && e.Path != nil {
				b.errorf(at, "%s: the manifest %s does not exist (a path is relative to this manifest's directory; a directory means its %s)", who, im.Shown, input.DefaultManifest)
			} else {
				b.errorf(at, "%s: %v", who, im.Err)
			}
			continue
		}
		broken := im.ParseErr != nil
		if broken {
			// The other manifest's own errors, at its file:line:col; its
			// names are still offered (as far as it decodes), so that
			// this manifest's references to them are not errors too.
			if es, ok := im.ParseErr.(manifest.Errors); ok {
				b.errs = append(b.errs, es...)
			} else {
				b.errorf(e.Pos, "%s: %s: %v", who, im.Shown, im.ParseErr)
			}
		}
		if im.Manifest == nil {
			continue
		}
		declared := map[string]*manifest.Message{}
		var declNames []string
		for _, mm := range im.Manifest.Messages {
			declared[mm.Name.Value] = mm
			declNames = append(declNames, mm.Name.Value)
		}
		take := func(mm *manifest.Message, at manifest.Pos) {
			name := mm.Name.Value
			if l := local[name]; l != nil {
				b.errorf(l.Name.Pos, "message %q is declared here and imported from %s (%s:%d:%d, %s:%d:%d); rename this one, or list the messages you import (messages: [...] under that entry) without it",
					name, im.Shown, im.Shown, mm.Name.Pos.Line, mm.Name.Pos.Col, b.file.Path, at.Line, at.Col)
				return
			}
			if prev := b.offered[name]; prev != nil {
				if prev.site.imp == im {
					return // a reply already taken, or listed twice
				}
				b.errorf(at, "%s: message %q is imported from %s and from %s (%s:%d:%d); list the messages of one of them (messages: [...]) without it",
					who, name, im.Shown, prev.site.imp.Shown, b.file.Path, prev.site.pos.Line, prev.site.pos.Col)
				return
			}
			b.offered[name] = &importedMessage{decl: mm, site: &importSite{imp: im, pos: at, index: i}, broken: broken}
		}
		if e.Messages == nil {
			for _, mm := range im.Manifest.Messages {
				take(mm, e.Pos)
			}
		}
		for _, n := range e.Messages {
			mm := declared[n.Value]
			if mm == nil {
				b.errorf(n.Pos, "%s imports %q, which %s does not declare%s", who, n.Value, im.Shown, didYouMeanOrList(n.Value, declNames))
				continue
			}
			take(mm, n.Pos)
			// A request's reply comes with it: its handler returns one.
			for r := mm.Reply; r != nil; {
				rm := declared[r.Value]
				if rm == nil || b.offered[r.Value] != nil {
					break
				}
				take(rm, n.Pos)
				r = rm.Reply
			}
		}
		for _, x := range im.Manifest.Exchanges {
			name := x.Name.Value
			if l := localX[name]; l != nil {
				b.errorf(l.Name.Pos, "exchange %q is declared here and by %s (%s:%d:%d), which this manifest imports; the exchange has one owner: remove it here (a binding or publisher here uses the imported one)",
					name, im.Shown, im.Shown, x.Name.Pos.Line, x.Name.Pos.Col)
				continue
			}
			if prev := b.offeredExchanges[name]; prev != nil {
				if prev.decl.Type.Value != x.Type.Value {
					b.errorf(e.Pos, "%s: exchange %q is a %s exchange in %s and a %s one in %s; the broker refuses the second declaration",
						who, name, x.Type.Value, im.Shown, prev.decl.Type.Value, prev.imp.Shown)
				}
				continue
			}
			b.offeredExchanges[name] = &importedExchange{decl: x, imp: im}
		}
	}
}

// didYouMeanOrList is " (did you mean "x"?)", or "; it declares: ...".
func didYouMeanOrList(name string, known []string) string {
	if s := manifest.DidYouMean(name, known); s != "" {
		return s
	}
	if len(known) == 0 {
		return " (it declares no message)"
	}
	return "; it declares " + joinQuoted(known)
}

// importedMessages adds to the model the imported messages this manifest
// uses: those its queues consume, its publishers publish, or its
// messages reply with, and the replies of those. The others are not
// generated: a consumer gets the consumer side of what it consumes.
func (b *builder) importedMessages() {
	var used []string
	use := func(name string) {
		if o := b.offered[name]; o != nil && !o.broken && b.messageByName[name] == nil && !slices.Contains(used, name) {
			used = append(used, name)
		}
	}
	for _, q := range b.file.Queues {
		for _, c := range q.Consumes {
			use(c.Value)
		}
	}
	for _, p := range b.file.Publishers {
		for _, pm := range p.Messages {
			use(pm.Message.Value)
		}
	}
	for _, mm := range b.file.Messages {
		if mm.Reply != nil {
			use(mm.Reply.Value)
		}
	}
	for i := 0; i < len(used); i++ {
		if r := b.offered[used[i]].decl.Reply; r != nil {
			use(r.Value)
		}
	}
	// In the order of imports:, then of each manifest's messages:.
	slices.SortStableFunc(used, func(x, y string) int {
		return b.importOrder(x) - b.importOrder(y)
	})
	for _, name := range used {
		o := b.offered[name]
		b.message(o.decl, o.site)
	}
	for _, name := range used {
		o := b.offered[name]
		if r := o.decl.Reply; r != nil {
			if reply := b.messageByName[r.Value]; reply != nil && reply.imported != nil {
				b.messageByName[name].Reply = reply
			}
		}
	}
}

// importOrder sorts imported messages as their manifests declare them.
func (b *builder) importOrder(name string) int {
	o := b.offered[name]
	n := 0
	for _, mm := range o.site.imp.Manifest.Messages {
		if mm == o.decl {
			break
		}
		n++
	}
	return o.site.index*100000 + n
}

// importedExchanges adds to the model the imported exchanges that a
// binding or publisher of this manifest names: its Topology declares them
// too (the declaration is idempotent when the kind is the same, so
// neither service must start first; a kind changed by its owner is the
// broker's PRECONDITION_FAILED at the second).
func (b *builder) importedExchanges() {
	var used []string
	use := func(name string) {
		if b.offeredExchanges[name] != nil && b.exchangeByName[name] == nil && !slices.Contains(used, name) {
			used = append(used, name)
		}
	}
	for _, q := range b.file.Queues {
		for _, bd := range q.Bindings {
			use(bd.Exchange.Value)
		}
	}
	for _, p := range b.file.Publishers {
		if p.Exchange != nil {
			use(p.Exchange.Value)
		}
	}
	for _, name := range used {
		o := b.offeredExchanges[name]
		x := &Exchange{Name: name, Kind: o.decl.Type.Value, From: o.imp.Ref}
		b.exchangeByName[name] = x
		b.m.Exchanges = append(b.m.Exchanges, x)
	}
}

// perhapsImported: a name nothing here declares, and no known name is
// close to, may be one of an import that could not be read (its error is
// reported): no error of its own then.
func (b *builder) perhapsImported(name string, known []string) bool {
	return b.importFailed && manifest.DidYouMean(name, known) == ""
}
