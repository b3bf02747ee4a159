// Package domain is the root of tokenscope's pure model. Its subpackages hold entities,
// value objects, enums with Parse functions and pure calculations. They may import only the
// standard library, github.com/shopspring/decimal and each other: no I/O, no context, no
// adapters. A test in this folder (imports_test.go) enforces the rule.
package domain
