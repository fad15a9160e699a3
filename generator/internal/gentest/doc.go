// Package gentest holds what the tests of generator/schema and
// generator/emit share: rendering a Universe's types, checking the source,
// and building a throwaway module that requires this one. Only tests
// import it.
package gentest
