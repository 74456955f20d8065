// Package hugepage asks Linux to back the process's large memory with huge
// pages (2 MiB), for the replay of a large cassette. A replayed call reads a
// few places scattered over all that the cassette holds (its index entry,
// its recorded request, its response); with the kernel's usual 4 KiB pages
// each such read also misses the TLB and walks the page tables, which on a
// cassette of 100,000 interactions (70 MiB) cost more than the misses of the
// data themselves. Go's heap asks for no huge pages, and most Linux systems
// give them only where asked (transparent_hugepage "madvise").
package hugepage

// MinBytes is the smallest mapping worth backing: below it, what a replay
// reads fits in what the TLB covers with small pages.
const MinBytes = 16 << 20
