// Package hugepage asks the kernel to back large host allocations that
// usmbridge makes itself with transparent huge pages, as NumPy does for
// its arrays.
//
// With transparent huge pages in "madvise" mode (the default of most
// distributions) anonymous memory gets 2 MiB pages only where the program
// asked for them with madvise(MADV_HUGEPAGE). NumPy asks for every array
// of 4 MiB or more; the SYCL runtimes do not. On this project's 2-core VM
// a 64 MiB MPI Allreduce over 4 KiB pages takes 1.2-1.3x as long as over
// huge pages, and mapping and first touching 64 MiB takes ~15x as long
// (RATIONALE.md, "Huge pages for large host allocations"). Advise follows
// NumPy's rule, so usmbridge memory and NumPy memory of the same size are
// backed alike.
//
// The advice is only ever given for memory the caller allocated and owns,
// and only for the 2 MiB-aligned part of it, so no page outside the
// allocation changes. It changes no content and no semantics; where the
// kernel cannot follow it (no THP, "never" mode) the memory keeps 4 KiB
// pages.
package hugepage
