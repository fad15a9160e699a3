package emit_test

import "github.com/acemq/acemq-go/internal/gen/gentest"

// The helpers this package's tests share with internal/gen/schema's.
var (
	render      = gentest.Render
	gen         = gentest.Gen
	checkSource = gentest.CheckSource
	checkNoAny  = gentest.CheckNoAny
	assertHas   = gentest.AssertHas
	repoRoot    = gentest.RepoRoot
	writeModule = gentest.WriteModule
	goCmd       = gentest.GoCmd
)
