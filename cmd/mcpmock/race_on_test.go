//go:build race

package main

// raceEnabled: the race detector makes the process several times slower,
// too slow for a test of a promise about time.
const raceEnabled = true
