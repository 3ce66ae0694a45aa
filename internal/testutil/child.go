package testutil

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ChildEnv names the case that a test binary re-executed by RunChild runs.
const ChildEnv = "USMBRIDGE_TEST_CHILD"

// InChild reports whether this process is the child that RunChild started
// for the case name. A crash-class test is written as
//
//	func TestX(t *testing.T) {
//		if testutil.InChild("x") {
//			... what could abort or hang the process ...
//			return
//		}
//		testutil.RunChild(t, "x", time.Minute).Expect(t, 0, "wanted output")
//	}
func InChild(name string) bool { return os.Getenv(ChildEnv) == name }

// Child is how a child process ended.
type Child struct {
	Output   string        // standard output and error, interleaved
	ExitCode int           // -1 when killed by a signal (TimedOut, or a crash)
	Signal   string        // the signal that ended it, if any
	TimedOut bool          // killed because it outlived the timeout
	Elapsed  time.Duration // wall time until it ended
}

// RunChild re-executes the test binary to run only the current test
// (-test.run matching tb.Name() exactly) with ChildEnv=name and extra
// environment entries env ("K=V"), in its own process group. The child's
// -test.timeout is timeout (a hang inside Go then ends with every
// goroutine's stack in the output); one that outlives it by a few more
// seconds (a hang the Go runtime cannot report) is killed with its whole
// group and reported as TimedOut. A crash in the child (abort, fatal error, a
// signal) ends only the child, so the parent test can fail with its
// output instead of the runner dying. RunChild fails tb only when the
// child cannot be started; assertions on the result are the caller's.
func RunChild(tb testing.TB, name string, timeout time.Duration, env ...string) Child {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatalf("RunChild: %v", err)
	}
	parts := strings.Split(tb.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run="+strings.Join(parts, "/"), "-test.count=1", "-test.v",
		"-test.timeout="+timeout.String())
	cmd.Env = append(append(os.Environ(), ChildEnv+"="+name), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	c := Child{Output: out.String(), Elapsed: time.Since(start), TimedOut: ctx.Err() != nil}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		c.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			c.Signal = ws.Signal().String()
		}
	default:
		if cmd.ProcessState == nil {
			tb.Fatalf("RunChild %s: %v", name, err)
		}
		c.ExitCode = cmd.ProcessState.ExitCode()
	}
	return c
}

// Expect fails tb unless the child ended by itself, with exit status code,
// and its output contains every string of want.
func (c Child) Expect(tb testing.TB, code int, want ...string) {
	tb.Helper()
	switch {
	case c.TimedOut:
		tb.Fatalf("child timed out after %v; output:\n%s", c.Elapsed, c.Output)
	case c.Signal != "":
		tb.Fatalf("child killed by %s; output:\n%s", c.Signal, c.Output)
	case c.ExitCode != code:
		tb.Fatalf("child exited with status %d, want %d; output:\n%s", c.ExitCode, code, c.Output)
	}
	for _, w := range want {
		if !strings.Contains(c.Output, w) {
			tb.Fatalf("child output lacks %q; output:\n%s", w, c.Output)
		}
	}
}
