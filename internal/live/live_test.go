package live

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSet(t *testing.T) {
	s := NewSet("livetest", "queues", "allocations")
	s.Counter("queues").Add(2)
	s.Counter("allocations").Add(1)
	s.Counter("queues").Add(-1)
	assert.Equal(t, map[string]int64{"queues": 1, "allocations": 1}, s.Snapshot())
	assert.Equal(t, int64(1), All()["livetest.queues"])
	assert.Equal(t, map[string]int64{"queues": 1}, Leaks(map[string]int64{"queues": 1, "events": 0}))
	assert.Panics(t, func() { s.Counter("events") }, "an undeclared counter is a programming error")
}
