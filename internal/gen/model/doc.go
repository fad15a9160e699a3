// Package model resolves a parsed manifest into what the emitters need:
// every reference followed, every policy parsed, every schema file loaded
// and mapped (by package schema), and every Go identifier decided. It reads
// the schema files from the fs.FS it is given (internal/gen/input read them)
// and does no I/O.
//
// Build reports every problem at once, each an *manifest.Error at the
// manifest position it concerns and saying what to write instead:
//
//	acemq.yaml:12:5: queue "orders.new" consumes "OrderPlacd", which no message declares (did you mean "OrderPlaced"?)
//
// # Names
//
// Names are decided here and only here (see names.go): a manifest name
// becomes a Go identifier by splitting it at every rune that is not a
// letter or a digit and upper-casing the first letter of each part
// (orders.new → OrdersNew, order-placed → OrderPlaced); a name that would
// not start with an upper-case letter gets an X in front (3d → X3d, 订单 →
// X订单). go_name overrides the derived name. Two declarations that would
// take the same package-level identifier are an error naming both
// positions; the emitters never invent or repair a name.
package model
