package replayer

import "flag"

// soak turns on the long runs: 100,000 calls, 64 MiB lines.
var soak = flag.Bool("soak", false, "run the soak tests in full (100,000 calls, 64 MiB lines)")
