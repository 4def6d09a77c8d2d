// Package enginetest holds fixed test inputs shared by the engines'
// tests; only tests import it.
package enginetest
