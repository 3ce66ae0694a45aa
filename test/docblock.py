"""Runs ```python blocks of the docs (test/docs_test.go writes each to a
file and names it by where it is in the docs):

    docblock.py session DOC:LINE=PATH ...   interactive sessions (">>> "),
        checked with doctest one after the other in one namespace, as a
        reader goes down a page: the output shown must be the output got,
        and an exception shown is matched by its class only, since the docs
        paraphrase messages;
    docblock.py program PATH                a program, run as __main__.

Exit status 0 when every block ran as the docs show it."""
import doctest
import runpy
import sys

FLAGS = doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL | doctest.NORMALIZE_WHITESPACE


def sessions(args):
    globs = {"__name__": "__main__"}
    parser = doctest.DocTestParser()
    failed = 0
    for arg in args:
        label, path = arg.split("=", 1)
        with open(path) as f:
            text = f.read()
        doc, line = label.rsplit(":", 1)
        # Lines count from the fence, so failures name the doc's own lines.
        test = parser.get_doctest(text, globs, label, doc, int(line))
        if not test.examples:
            print("%s: a session with no examples" % label)
            failed += 1
            continue
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        runner.run(test, clear_globs=False)
        failed += runner.failures
        globs = test.globs
    return 1 if failed else 0


def main(argv):
    if argv[:1] == ["session"]:
        return sessions(argv[1:])
    if argv[:1] == ["program"] and len(argv) == 2:
        runpy.run_path(argv[1], run_name="__main__")
        return 0
    sys.exit("usage: docblock.py session DOC:LINE=PATH ... | docblock.py program PATH")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
