//go:build race

package httpguard

// raceEnabled says the race detector is on: the tests of every package
// then run with released bodies overwritten (Body.recycle).
const raceEnabled = true
