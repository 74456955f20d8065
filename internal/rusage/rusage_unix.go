//go:build unix

package rusage

import (
	"syscall"
	"time"
)

// Self is what the calling process has used so far; ok is false where the
// system does not say.
func Self() (u Usage, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return Usage{}, false
	}
	return Usage{
		User:        time.Duration(ru.Utime.Nano()),
		System:      time.Duration(ru.Stime.Nano()),
		MinorFaults: int64(ru.Minflt),
	}, true
}
