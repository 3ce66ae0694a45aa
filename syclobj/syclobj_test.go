package syclobj_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/usmbridge/usmbridge/syclobj"
)

func TestRefs(t *testing.T) {
	c := syclobj.UnsafeContextRef(0x1234)
	q := syclobj.UnsafeQueueRef(0xbeef)
	assert.Equal(t, uintptr(0x1234), c.Pointer())
	assert.Equal(t, uintptr(0xbeef), q.Pointer())
	assert.Equal(t, "SyclContextRef(0x1234)", c.String())
	assert.Equal(t, "SyclQueueRef(0xbeef)", q.String())
}
