package dlabi

import "testing"

func TestNegotiateVersion(t *testing.T) {
	producer := Version{Major: 1, Minor: 2}
	for _, c := range []struct {
		name      string
		max       *Version
		want      Version
		versioned bool
	}{
		{"no max_version: legacy", nil, Version{}, false},
		{"major 0: legacy", &Version{Major: 0, Minor: 9}, Version{}, false},
		{"1.0: the consumer's minor", &Version{Major: 1}, Version{Major: 1, Minor: 0}, true},
		{"1.1: the consumer's minor", &Version{Major: 1, Minor: 1}, Version{Major: 1, Minor: 1}, true},
		{"1.2: equal", &Version{Major: 1, Minor: 2}, producer, true},
		{"1.7: capped at the producer's minor", &Version{Major: 1, Minor: 7}, producer, true},
		{"2.0: a newer major gets the producer's version", &Version{Major: 2}, producer, true},
		{"2.0 asked, minor ignored", &Version{Major: 2, Minor: 0xffffffff}, producer, true},
	} {
		v, versioned := NegotiateVersion(c.max, producer)
		if v != c.want || versioned != c.versioned {
			t.Errorf("%s: got %v, %v; want %v, %v", c.name, v, versioned, c.want, c.versioned)
		}
	}
}
