//go:build !race

package pybridge

const raceEnabled = false
