"""bench.py's page and its regression check: the table a run prints, the
page it writes, and regressions(), which keeps the page where a row's
ratio grew by more than 10%. scripts/test.sh runs this file with pytest
(it needs nothing built: no row runs here).

testdata/performance-7ff8d06.md is docs/performance.md as commit 7ff8d06
wrote it, kept so that the parse of a real page is held to its values
after docs/performance.md is rewritten."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402 (after the path it is found on)

F = "Go `f(x)`, x a NumPy 1-D float32 array"
NB = "nanobind 3.1.0 `f(x)`"
CAPI = "C-API `f(x)`, buffer protocol"


def line(row, peer, peer_ns, ours_ns):
    return bench.table_line({"row": row, "peer": peer, "peer_ns": peer_ns, "ours_ns": ours_ns})


def old_page(lines):
    """A page as --write writes it, of these table lines."""
    return bench.page("scripts/bench.sh --write docs/performance.md", "CPU: test, 2 CPUs",
                      "Go go1.26.8 linux/amd64 (`go version`), CPython 3.11.2, NumPy 2.4.6, nanobind 3.1.0",
                      lines, [], [], "abc1234")


def test_ratio_9_percent_worse_passes():
    old = old_page([line(F, NB, 100, 200)])  # 2.00
    new = [line(F, NB, 1000, 2180)]  # 2.18: 9% worse, and the times in µs
    assert "2.18 µs" in new[0]
    assert bench.regressions(old, new) == []


def test_ratio_11_percent_worse_fails():
    old = old_page([line(F, NB, 100, 200), line(F, CAPI, 50, 200)])  # 2.00, 4.00
    new = [line(F, NB, 1000, 2220), line(F, CAPI, 50, 200)]  # 2.22: 11% worse; 4.00 the same
    assert bench.regressions(old, new) == [(F, NB, 2.00, 2.22)]


def test_better_or_equal_passes():
    old = old_page([line(F, NB, 100, 200)])
    assert bench.regressions(old, [line(F, NB, 100, 150)]) == []
    assert bench.regressions(old, [line(F, NB, 100, 200)]) == []


def test_row_missing_from_old_page_passes():
    old = old_page([line(F, NB, 100, 200)])
    new = [line(F, NB, 100, 200), line(F, bench.FLOOR, 50, 200), line("a new row", "its peer", 1, 9)]
    assert bench.regressions(old, new) == []


def test_skipped_or_failed_rows_are_not_compared():
    skipped = bench.table_line({"row": F, "peer": NB, "skipped": "no nanobind"})
    failed = "| %s | row failed: ImportError: no module named capipeer | | | | | |" % F
    # skipped or failed before, a (much worse) ratio now
    assert bench.regressions(old_page([skipped, failed]), [line(F, NB, 100, 900)]) == []
    # a ratio before, skipped or failed now
    assert bench.regressions(old_page([line(F, NB, 100, 200)]), [skipped, failed]) == []
    assert bench.table_ratios([skipped, failed]) == {}


def test_page_round_trip():
    """What page() writes, table_ratios() reads back: every line, in order."""
    lines = [line(F, NB, 98, 202), line(F, bench.FLOOR, 140.4, 202),
             line("256 MiB host->shared copy", "C memcpy (pocl)", 14.23e6, 10.97e6)]
    assert bench.table_ratios(old_page(lines).splitlines()) == {
        (F, NB): 2.06, (F, bench.FLOOR): 1.44, ("256 MiB host->shared copy", "C memcpy (pocl)"): 0.77}


def test_real_page():
    """docs/performance.md as 7ff8d06 wrote it: its 18 table rows, µs and ms
    rows among them."""
    with open(os.path.join(HERE, "testdata", "performance-7ff8d06.md")) as f:
        ratios = bench.table_ratios(f.read().splitlines())
    assert len(ratios) == 18
    assert list(ratios)[0] == (F, NB)
    assert ratios[(F, NB)] == 2.06
    assert ratios[(F, CAPI)] == 3.73
    assert ratios[("Go `f(x)`, x a dpnp 1-D float32 array", "`x.__sycl_usm_array_interface__`")] == 2.15
    assert ratios[("`dpnp.tensor.from_dlpack` of our array", "of dpnp's own")] == 1.02
    assert ratios[("256 MiB host->shared copy", "C memcpy (intel-opencl)")] == 0.75
    assert ratios[("4 KiB OpenCL copy (fixed cost)", "enqueue+clFinish (pocl/host-to-shared)")] == 0.02
    assert ratios[("DLPack round trip, 1 GiB vs 1 B", "the 1 B array")] == 1.00


def test_current_page():
    """docs/performance.md as it is now: every row of its table with a ratio
    is read, whatever the numbers (another run rewrites them)."""
    with open(os.path.join(HERE, "..", "..", "docs", "performance.md")) as f:
        text = f.read()
    # the rows, found another way: a line of the table whose fifth cell is a number
    want = [tuple(c.strip() for c in m.group(1, 2))
            for m in re.finditer(r"^\| ([^|]+) \| ([^|]+) \|[^|]*\|[^|]*\| -?\d+\.\d\d \|.*\|$", text, re.M)]
    assert len(want) >= 10
    assert list(bench.table_ratios(text.splitlines())) == want


def test_page_names_the_floor():
    assert "`%s`" % bench.FLOOR in bench.PEERS_TEXT
    assert "saxpy_numpy" in bench.ROW_NOTES


def test_page_cpu():
    """The CPU the regression check names when the page's is another."""
    assert bench.page_cpu(old_page([line(F, NB, 100, 200)])) == "test, 2 CPUs"
    assert bench.page_cpu(bench.cpu_line(9, False)) == bench.cpu_name()
    assert bench.page_cpu("no CPU line") is None


def result(peer, peer_ns, ours_ns, row=F):
    return {"row": row, "peer": peer, "peer_ns": peer_ns, "ours_ns": ours_ns}


def test_merge_rounds_keeps_each_sides_best():
    """A row run twice: each side its best of both runs, whichever run it
    came from, so a slow round of one side in one run does not decide."""
    first = [result(NB, 100, 260), result(CAPI, 50, 200)]
    second = [result(NB, 120, 210), result(CAPI, 40, 220)]
    merged = bench.merge_rounds(first, second)
    assert [(r["peer"], r["peer_ns"], r["ours_ns"]) for r in merged] == [(NB, 100, 210), (CAPI, 40, 200)]
    # a peer that got faster in the second run makes the ratio worse, not better
    assert merged[1]["ours_ns"] / merged[1]["peer_ns"] > first[1]["ours_ns"] / first[1]["peer_ns"]


def test_merge_rounds_failed_or_skipped_keeps_second_run():
    skipped = {"row": F, "peer": NB, "skipped": "no nanobind"}
    assert bench.merge_rounds([result(NB, 100, 200)], [skipped]) == [skipped]
    assert bench.merge_rounds([skipped], [result(NB, 100, 300)]) == [result(NB, 100, 300)]
    failed = [{"row": F, "failed": "ImportError"}]
    both = [result(NB, 100, 300), result(CAPI, 50, 300)]
    assert bench.merge_rounds(failed, both) == both
    assert bench.merge_rounds(both, failed) == failed


def test_failed_row_line():
    """A failed row's line: no ratio, so regressions() does not compare it."""
    ln = bench.table_line({"row": F, "failed": "ImportError: no module named capipeer"})
    assert ln == "| %s | row failed: ImportError: no module named capipeer | | | | | |" % F
    assert bench.table_ratios([ln]) == {}


def test_page_names_rows_run_twice():
    lines = [line(F, NB, 100, 200)]
    args = ("scripts/bench.sh --write docs/performance.md", "CPU: test, 2 CPUs", "versions", lines, [], ["f_numpy"], "abc1234")
    assert "Run twice" not in bench.page(*args)
    text = bench.page(*args, rerun=["f_numpy", "f_dpnp"])
    assert "more than 10% above the page's: `f_numpy`, `f_dpnp`." in text
    assert bench.table_ratios(text.splitlines()) == {(F, NB): 2.00}
