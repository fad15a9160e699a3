// Package registry holds the Avro schema registries a service chooses
// between: Memory (one process), Directory (a directory several processes
// share), HTTP (a Confluent-compatible registry server), and Config, the
// manifest's registry: block as data, which Open opens now and OpenLazy on
// first use (generated code keeps an OpenLazy registry in a package-level
// variable, which must not fail at init).
//
// Each is a runtime.SchemaRegistry: give one to runtime.Dial with
// runtime.WithSchemaRegistry. The interface, the errors a registry's
// callers match (runtime.ErrSchemaNotFound, runtime.ErrRegistryUnavailable)
// live in package runtime; this package imports runtime and implements its
// interface, never the other way round (docs/runtime.md, "Packages"). The
// default registry, Fingerprint (what a connection uses when given none),
// and the ids it derives (SchemaID, SchemaFingerprint) are here for tools
// and tests; runtime uses the same engine internally.
package registry
