// Package installtest runs the install steps that README.md gives a
// service (a checkout of acemq-go, its modules taken with replace
// directives, acemq-gen recorded as a tool) in a scratch module outside
// the repository, with the go command a user runs, and builds the service
// they produce. It holds tests only.
package installtest
