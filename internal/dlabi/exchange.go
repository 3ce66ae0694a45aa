package dlabi

// ExchangeAPI is DLPackExchangeAPI (dlpack.h 1.3): a header (version,
// prev_api) and five function pointers. 56 bytes on LP64. pybridge reads
// producers' tables with it; pyext's C half offers one of the same layout
// (its layout test holds the two together).
type ExchangeAPI struct {
	Version                         Version
	PrevAPI                         uintptr // *ExchangeAPI of an older major, or 0
	ManagedTensorAllocator          uintptr
	ManagedTensorFromPyObjectNoSync uintptr
	ManagedTensorToPyObjectNoSync   uintptr
	DLTensorFromPyObjectNoSync      uintptr // may be 0
	CurrentWorkStream               uintptr
}
