package testutil

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestRunChild(t *testing.T) {
	if InChild("exit") {
		os.Stdout.WriteString("child says hello\n")
		os.Exit(3)
	}
	if InChild("panic") {
		panic("child panics")
	}
	if InChild("sleep") {
		time.Sleep(time.Hour) // only the timeout ends it
	}
	if InChild("pass") {
		if os.Getenv("EXTRA") != "1" {
			t.Fatal("extra environment entry missing")
		}
		return
	}

	c := RunChild(t, "exit", time.Minute)
	c.Expect(t, 3, "child says hello")

	c = RunChild(t, "panic", time.Minute)
	c.Expect(t, 2, "child panics")

	c = RunChild(t, "sleep", time.Second)
	if c.ExitCode == 0 || c.Elapsed > 30*time.Second {
		t.Fatalf("a sleeping child should be ended by its timeout: %+v", c)
	}
	if !c.TimedOut && !strings.Contains(c.Output, "test timed out") {
		t.Fatalf("neither killed nor timed out by the test runner:\n%s", c.Output)
	}

	RunChild(t, "pass", time.Minute, "EXTRA=1").Expect(t, 0, "--- PASS: TestRunChild")
}

func TestRunChildSubtest(t *testing.T) {
	t.Run("a b", func(t *testing.T) {
		if InChild("sub") {
			os.Exit(7)
		}
		RunChild(t, "sub", time.Minute).Expect(t, 7)
	})
}
