package pybridge

import (
	"errors"
	"testing"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/usm"
)

// A failure pybridge handles itself leaves no exception pending behind
// it, or the next C API call would run with it set: here the repr in an
// error message that cannot be read as UTF-8.
func TestUnreadableReprLeavesNothingPending(t *testing.T) {
	py := embedded(t)
	run(t, py, "class UnreadableRepr:\n    def __repr__(self): return 'x\\ud800'\n")
	err := py.Do(func(g *GIL) error {
		o := eval(t, g, "UnreadableRepr()")
		defer g.DecRef(o)
		_, err := g.parseDLPackArgs(dlpack.Device{}, Object{}, o, Object{}, Object{})
		if !errors.Is(err, usm.ErrType) {
			t.Errorf("max_version=UnreadableRepr(): %v, want a TypeError", err)
		}
		if g.api().ErrOccurred() != 0 {
			t.Errorf("an exception is left pending: %v", g.fetch(""))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An exception left pending inside Do by a failure nobody reported is
// Do's error, and the thread has none pending afterwards.
func TestDoReportsAnExceptionLeftPending(t *testing.T) {
	py := embedded(t)
	err := py.Do(func(g *GIL) error {
		a := g.api()
		a.ErrSetString(a.Exc["OverflowError"], "left behind")
		return nil
	})
	var pe *Exception
	if !errors.As(err, &pe) || pe.Type != "OverflowError" || pe.Message != "left behind" {
		t.Fatalf("Do returned %v, want the OverflowError left pending", err)
	}
	if err := py.Do(func(g *GIL) error {
		if g.api().ErrOccurred() != 0 {
			t.Errorf("the next Do starts with an exception pending: %v", g.fetch(""))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// DoHeld runs fn only on a thread that holds the GIL: inside Do it does,
// with Do's treatment of exceptions (one set before is put back, one left
// by fn is the error); outside, fn does not run and the error says why.
func TestDoHeld(t *testing.T) {
	py := embedded(t)
	ran := false
	if err := py.DoHeld(func(g *GIL) error { ran = true; return nil }); err == nil || ran {
		t.Fatalf("DoHeld without the GIL: ran %v, error %v", ran, err)
	}
	err := py.Do(func(g *GIL) error {
		a := g.api()
		a.ErrSetString(a.Exc["KeyError"], "set before")
		err := py.DoHeld(func(g *GIL) error {
			ran = true
			if g.api().ErrOccurred() != 0 {
				t.Error("fn runs with the caller's exception pending")
			}
			a.ErrSetString(a.Exc["OverflowError"], "left behind")
			return nil
		})
		var pe *Exception
		if !ran || !errors.As(err, &pe) || pe.Type != "OverflowError" {
			t.Errorf("DoHeld with the GIL: ran %v, error %v, want the OverflowError left pending", ran, err)
		}
		if e := g.fetch(""); !errors.As(e, &pe) || pe.Type != "KeyError" {
			t.Errorf("the caller's exception after DoHeld: %v, want its KeyError back", e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
