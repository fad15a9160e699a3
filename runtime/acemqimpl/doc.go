// Package acemqimpl is the facade the code acemq-gen generates calls
// beside package runtime, and nothing else: the JSON checks, encoders and
// decoders it writes for a payload type, the conversion of general Avro
// union branches, and the version constant that keeps generated code and
// the runtime in step. As protobuf-go's runtime/protoimpl, it holds no
// logic of its own: every type is an alias of a type in the runtime's
// internal packages (JSONCheck is jsoncheck.Check, JSONDecoder
// jsoncheck.Decoder, ...) and every function forwards to them or to
// package runtime in a line or two, so that generated code, which lives in the user's packages, can reach
// what the internal rule keeps from everyone else.
//
// Nothing in it is for users: a program calls package runtime (and
// runtime/registry, and the stores' own packages), never this package, and
// its API may change in any release, together with the generator. A store
// module calls runtime's API (an outbox: runtime.NewOutgoing and
// Connection.PublishOutgoing); acemq-go's own tests run the generated
// parts alone with runtime/acemqimpl/impltest.
package acemqimpl
