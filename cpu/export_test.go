package cpu

// Stats gives the external tests one backend's live allocations (Live
// counts the whole process's).
func Stats(b *Backend) (allocations int, bytes uintptr) { return b.stats() }
