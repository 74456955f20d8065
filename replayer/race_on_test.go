//go:build race

package replayer

// raceEnabled: the race detector changes what allocates (sync.Pool drops
// items at random, closures escape), so allocation counts are checked
// without it (.ci/run runs those tests once more without -race).
const raceEnabled = true
