// Package apicheck holds the test that keeps mcpmock's exported API
// callable from another module: no exported declaration of a public
// package may name a type of an internal package.
package apicheck
