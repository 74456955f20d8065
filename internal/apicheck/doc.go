// Package apicheck holds the tests that keep mcpmock's exported API
// callable from another module: no exported declaration of a public
// package may name a type of an internal package (a scan of the source),
// and a module of its own, built and vetted offline, names the type of
// every exported function, method, field, variable and type of the public
// packages (TestOutsideModuleNamesTheAPI).
package apicheck
