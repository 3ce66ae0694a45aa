package typestr_test

import (
	"testing"

	"github.com/usmbridge/usmbridge/typestr"
)

var sinkType typestr.Type

func BenchmarkParse(b *testing.B) {
	for _, s := range []string{"<f4", "|c16"} {
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				t, err := typestr.Parse(s)
				if err != nil {
					b.Fatal(err)
				}
				sinkType = t
			}
		})
	}
}
