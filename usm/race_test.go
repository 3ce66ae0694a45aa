//go:build race

package usm_test

const raceEnabled = true
