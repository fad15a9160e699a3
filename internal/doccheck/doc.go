// Package doccheck holds the test that every Go snippet in README.md,
// docs/*.md and examples/*/README.md compiles, and the one that
// docs/generator.md's manifest reference names every key of the manifest.
//
// Each fenced ```go block is built as a file of its own package under
// testdata/build (removed afterwards), with a //line directive so that a
// compiler error names the Markdown file and line. A block is a set of
// top-level declarations (or a whole file with its package clause); the
// imports it needs are added from the names it uses (context, errors,
// time, runtime, ...). An HTML comment on the line before the fence,
//
//	<!-- snippet: in golden/orders/want -->
//
// compiles the block inside a copy of that package, so it can use the
// generated names (OrderPlaced, Topology, ConsumeOrdersNew, ...)
// unqualified, as code in a service's own package does. The declaration
// blocks of one Markdown file with the same context are compiled together,
// one file each, so a later block may use what an earlier one declared; a
// block with its own package clause is a package alone.
package doccheck
