// Package extbridge is how pybridge/ext, the Go half of the Python
// package (usmbridge._ext), reaches the parts of pybridge that only an
// extension module needs: attaching to the interpreter that loads it,
// entering it on a thread that already holds the GIL, raising Go errors
// as Python exceptions, the decisions ext.c's fast paths replay (the
// export template, wait plans, the no-sync stream rule) and the DLPack C
// exchange API's producer side. None of it is for a Go program that
// embeds Python, so pybridge keeps these functions unexported and hands
// them over here (RATIONALE.md, "The extension module reaches pybridge
// through an internal bridge").
//
// pybridge fills an Ops in its init with Set; pybridge/ext takes it with
// Get, naming pybridge's GIL and Object as the type arguments, so every
// operation is typed for the extension as it is inside pybridge, and the
// only dynamic step is the one type assertion in Get. The package cannot
// import pybridge (pybridge imports it), hence the type parameters.
package extbridge
