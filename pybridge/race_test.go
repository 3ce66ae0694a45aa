//go:build race

package pybridge

const raceEnabled = true
