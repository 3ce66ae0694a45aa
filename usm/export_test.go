package usm

// Names the external tests (package usm_test) use for unexported parts of
// the package: layout math and the registry's device order are tested
// directly, but users reach them only through Array, Interface and
// Registry.
var (
	ByteWindow    = byteWindow
	CStrides      = cStrides
	FStrides      = fStrides
	IsCContiguous = isCContiguous
	IsFContiguous = isFContiguous
	ElementCount  = elementCount
)

// The optional backend interfaces, for backends_test.go.
type (
	Copier         = copier
	QueueProvider  = queueProvider
	RefBinder      = refBinder
	ContextQuerier = contextQuerier
	DLPackDevicer  = dlpackDevicer
	Orderer        = orderer
	ProgramBuilder = programBuilder
	Describer      = deviceDescriber

	AccessError = accessError
)

func (r *Registry) DLPackDevice(b Backend, local int) (DLDevice, error) {
	return r.dlpackDevice(b, local)
}
func (r *Registry) Add(b Backend)                             { r.add(b) }
func (r *Registry) Backends() []Backend                       { return r.rankedBackends() }
func (r *Registry) DeviceAt(global int) (Backend, int, error) { return r.deviceAt(global) }
func (r *Registry) GlobalIndex(b Backend, local int) int      { return r.globalIndex(b, local) }
func (in *Interface) Validate() error                         { return in.validate() }
