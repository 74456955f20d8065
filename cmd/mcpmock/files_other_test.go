//go:build !unix

package main

func platformBadPaths() []badPath       { return nil }
func platformRecordBadPaths() []badPath { return nil }
