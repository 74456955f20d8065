// Package rusage reads what the running process has used of the machine:
// CPU time and page faults, for the benchmark harness and for measuring
// what a change costs (MCPMOCK_RUSAGE).
package rusage

import "time"

// Usage is what the process has used so far, its children not counted.
type Usage struct {
	User, System time.Duration
	// MinorFaults are page faults on memory touched for the first time.
	MinorFaults int64
}

// CPU is the user and system time together.
func (u Usage) CPU() time.Duration { return u.User + u.System }
