package dlpack_test

import (
	"testing"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

// benchArray is a 1-D uint8 array of n bytes (the cost must not depend on n).
func benchArray(b testing.TB, n int64) (*usm.Registry, *usm.Array) {
	host := new(cpu.Backend)
	reg := usm.NewRegistry(host)
	alloc, err := host.AllocHost(uintptr(n))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = alloc.Free() })
	a, err := reg.NewArray(alloc, dtype.Uint8, []int64{n})
	if err != nil {
		b.Fatal(err)
	}
	return reg, a
}

var sizes = []struct {
	name string
	n    int64
}{{"1B", 1}, {"1GiB", 1 << 30}}

// Export + the consumer calling the deleter: the whole life of an export.
func BenchmarkExportDelete(b *testing.B) {
	for _, sz := range sizes {
		for _, mode := range []struct {
			name string
			max  *dlpack.Version
		}{{"legacy", nil}, {"versioned", v(1, 0)}} {
			b.Run(sz.name+"/"+mode.name, func(b *testing.B) {
				_, a := benchArray(b, sz.n)
				opts := dlpack.ExportOptions{MaxVersion: mode.max}
				b.ReportAllocs()
				for b.Loop() {
					m, err := dlpack.Export(a, opts)
					if err != nil {
						b.Fatal(err)
					}
					m.Delete()
				}
			})
		}
	}
}

// The whole exchange: export, import by a consumer, release (which runs
// the deleter). Import + release alone costs this minus ExportDelete.
func BenchmarkRoundTrip(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			reg, a := benchArray(b, sz.n)
			opts := dlpack.ExportOptions{MaxVersion: v(1, 0)}
			iopts := dlpack.ImportOptions{Registry: reg}
			b.ReportAllocs()
			for b.Loop() {
				m, err := dlpack.Export(a, opts)
				if err != nil {
					b.Fatal(err)
				}
				tn, err := dlpack.Import(m, iopts)
				if err != nil {
					b.Fatal(err)
				}
				tn.Release()
			}
		})
	}
}

// Import + release of a tensor whose deleter is a foreign C function, so
// the release goes through purego.
func BenchmarkImportReleaseForeignDeleter(b *testing.B) {
	buf := benchHostBuf(b)
	fo := foreign{versioned: true, major: 1, data: buf, device: cpuDev(), ndim: 1, dtype: f32, shape: []int64{4}, strides: []int64{1}}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		m, _ := fo.build(b)
		b.StartTimer()
		tn, err := dlpack.Import(m, dlpack.ImportOptions{})
		if err != nil {
			b.Fatal(err)
		}
		tn.Release()
	}
}

// Import of a host tensor and its release: Import's checks and
// bookkeeping (the tensor has no deleter), and the one allocation of an
// import, the Tensor.
func BenchmarkImportHost(b *testing.B) {
	b.Run("1d", func(b *testing.B) { benchImportHost(b, []int64{4}, []int64{1}) })
	b.Run("5d", func(b *testing.B) { benchImportHost(b, []int64{2, 2, 2, 2, 2}, []int64{16, 8, 4, 2, 1}) })
}

func benchImportHost(b *testing.B, shape, strides []int64) {
	buf := benchHostBuf(b)
	fo := foreign{versioned: true, major: 1, data: buf, device: cpuDev(), ndim: int32(len(shape)), dtype: f32, shape: shape, strides: strides, noDeleter: true}
	m, _ := fo.build(b)
	b.Cleanup(func() { freeUndeleted(m) })
	b.ReportAllocs()
	for b.Loop() {
		t, err := dlpack.Import(m, dlpack.ImportOptions{KeepOnError: true})
		if err != nil {
			b.Fatal(err)
		}
		t.Release()
	}
}
