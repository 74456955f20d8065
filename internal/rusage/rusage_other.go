//go:build !unix

package rusage

// Self reports nothing where the system has no getrusage.
func Self() (u Usage, ok bool) { return Usage{}, false }
