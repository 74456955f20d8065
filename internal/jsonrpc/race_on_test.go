//go:build race

package jsonrpc

// raceEnabled: the race detector changes what allocates.
const raceEnabled = true
