// Package installtest runs the install steps that README.md gives a
// service (a checkout of acemq-go: the generator's module, the runtime,
// pgstore and redisstore taken with replace directives, acemq-gen recorded
// as a tool) in scratch modules outside the repository, with the go command
// a user runs, and builds the services they produce: one on the runtime
// alone, one on every module. It holds tests only.
package installtest
