// Package cassettefile is the cassette file on disk, below the format: the
// path rules (regular files only, symbolic links followed, directories
// made and removed again), the atomic write, and the JSON forms of a
// string and an offset that both writers of the format use (cassettes'
// Encode and the recorder's incremental saves), so that the two write the
// same bytes. It knows nothing of interactions: cassettes owns the format,
// and only cassettes and the recorder import this package.
package cassettefile
