//go:build !race

package replayer

const raceEnabled = false
