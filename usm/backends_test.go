package usm_test

import (
	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dpctl"
	"github.com/usmbridge/usmbridge/levelzero"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/usm"
)

// The module's backends implement the optional interfaces usm asserts
// (unexported: a backend has them by its methods' names and signatures,
// which usm.Backend's documentation lists). Checked at compile time, so a
// changed signature fails go vet and go test here rather than silently
// turning a backend's copies or queues off.
var (
	_ usm.Copier        = (*cpu.Backend)(nil)
	_ usm.QueueProvider = (*cpu.Backend)(nil)
	_ usm.Describer     = (*cpu.Backend)(nil)

	_ usm.Copier         = (*opencl.Backend)(nil)
	_ usm.QueueProvider  = (*opencl.Backend)(nil)
	_ usm.Orderer        = (*opencl.Queue)(nil)
	_ usm.ContextQuerier = (*opencl.Backend)(nil)
	_ usm.ProgramBuilder = (*opencl.Queue)(nil)
	_ usm.Describer      = (*opencl.Backend)(nil)

	_ usm.Copier         = (*levelzero.Backend)(nil)
	_ usm.QueueProvider  = (*levelzero.Backend)(nil)
	_ usm.Orderer        = (*levelzero.Queue)(nil)
	_ usm.ContextQuerier = (*levelzero.Backend)(nil)
	_ usm.ProgramBuilder = (*levelzero.Queue)(nil)
	_ usm.Describer      = (*levelzero.Backend)(nil)

	_ usm.Copier         = (*dpctl.Backend)(nil)
	_ usm.QueueProvider  = (*dpctl.Backend)(nil)
	_ usm.Orderer        = (*dpctl.Queue)(nil)
	_ usm.RefBinder      = (*dpctl.Backend)(nil)
	_ usm.DLPackDevicer  = (*dpctl.Backend)(nil)
	_ usm.ContextQuerier = (*dpctl.Backend)(nil)
	_ usm.ProgramBuilder = (*dpctl.Queue)(nil)
	_ usm.Describer      = (*dpctl.Backend)(nil)
)
