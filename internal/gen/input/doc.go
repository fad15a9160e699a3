// Package input is acemq-gen's loading stage: it reads, once, every file a
// run needs (the manifest, the schema file of each message, and the files
// their JSON Schema $refs name, transitively) into an in-memory fs.FS.
// The stages after it (manifest.Parse on the manifest's bytes, model.Build,
// schema.Build, compat, export) read only from that fs.FS, so they do no
// I/O: a test gives them an fstest.MapFS, and a file is read once however
// many stages look at it. It is the only package of the generator that
// does I/O (TestOnlyInputDoesIO in package generator holds the others to
// it): acemq-gen compat's previous version is read here too (LoadPrevious:
// a directory, a manifest file, or git:REF from git into memory), and
// compat compares what it is given.
//
// Names in these file systems are slash-separated, as io/fs has them.
// The machine's file system (OS) is rooted at "/", so the absolute path
// /srv/svc/acemq.yaml is the name srv/svc/acemq.yaml: a schema: given as an
// absolute path and a relative $ref both resolve in it (Resolve, Join).
//
// Avro schema files import nothing (a named type must be defined in the
// file that uses it), so only JSON Schema files have a closure.
package input
