// Package gentest holds what the tests of internal/gen/schema and
// internal/gen/emit share: rendering a Universe's types, checking the source,
// and building a throwaway module that requires this one. Only tests
// import it.
package gentest
