//go:build race

package recorder

// raceEnabled: the race detector changes what allocates, so allocation
// counts are checked without it (.ci/run runs those tests once more
// without -race).
const raceEnabled = true
