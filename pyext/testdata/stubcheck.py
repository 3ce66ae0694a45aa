"""The Python half of pyext's FuzzModuleStub (stub_fuzz_test.go): a
long-lived process that reads one JSON request a line and answers one JSON
line.

{"names": [...]} -> {"verdicts": [...]}: Python's verdict on each name (0 a
name, 1 no identifier, 2 a keyword, 3 not in NFKC form).

{"stub": text, "defs": [...]} -> {"error": message or null}: the stub must
compile, every name its annotations, decorators and aliases use must mean
an import, a class, an alias or a builtin where it is used (a method named
int makes "-> int" in its class mean the method, which type checkers
refuse), no name may be bound twice, and each def the module has must say
what the module says: its docstring (as inspect.cleandoc reads it) is the
doc CPython shows as __doc__, and its parameters, kinds and defaults are
those of its text signature, read as inspect.signature reads it, and those
the definition gave.
"""
import ast
import builtins
import inspect
import json
import keyword
import math
import struct
import sys
import unicodedata


def verdict(s):
    if not s.isidentifier():
        return 1
    if keyword.iskeyword(s):
        return 2
    if unicodedata.normalize("NFKC", s) != s:
        return 3
    return 0


def type_doc(name, doc):
    """A type's __doc__ from its internal doc, as CPython's
    _PyType_DocWithoutSignature makes it: a doc that starts with the name
    and "(" and has ")\\n--\\n\\n" before any blank line has a signature,
    which __doc__ leaves out."""
    if not doc.startswith(name + "("):
        return doc
    i = len(name)
    while i < len(doc):
        if doc.startswith(")\n--\n\n", i):
            return doc[i + 6:]
        if doc.startswith("\n\n", i):
            return doc
        i += 1
    return doc


class Fail(Exception):
    pass


class Bindings:
    """What the stub binds: at its top (name -> "import", "class", "def",
    "alias"), its aliases (name -> the name they stand for), and each
    class's body (class -> name -> "def", "variable")."""

    def __init__(self, tree):
        self.top, self.aliases, self.scopes = {}, {}, {}
        for n in tree.body:
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                for a in n.names:
                    self.bind(self.top, a.asname or a.name, "import", "the top")
            elif isinstance(n, ast.ClassDef):
                self.bind(self.top, n.name, "class", "the top")
                self.scopes[n.name] = scope = {}
                for m in n.body:
                    if isinstance(m, ast.FunctionDef):
                        setter = any(isinstance(d, ast.Attribute) and d.attr == "setter" for d in m.decorator_list)
                        if m.name in scope and not setter:
                            raise Fail("class %s: %s is bound twice" % (n.name, m.name))
                        scope[m.name] = "def"
                    elif isinstance(m, ast.AnnAssign):
                        self.bind(scope, m.target.id, "variable", "class " + n.name)
            elif isinstance(n, ast.FunctionDef):
                self.bind(self.top, n.name, "def", "the top")
            elif isinstance(n, ast.Assign):
                for t in n.targets:
                    self.bind(self.top, t.id, "alias", "the top")
                    if isinstance(n.value, ast.Name):
                        self.aliases[t.id] = n.value.id

    @staticmethod
    def bind(scope, name, kind, where):
        if name in scope:
            raise Fail("%s: %s is bound twice" % (where, name))
        scope[name] = kind

    def resolve(self, name, scope):
        if scope is not None and name in scope:
            return scope[name]
        if name in self.top:
            return self.top[name]
        return "builtin" if hasattr(builtins, name) else None

    def class_of(self, expr, scope):
        """The class of the stub an annotation names (through Optional[]
        and aliases), or None."""
        if isinstance(expr, ast.Subscript):
            expr = expr.slice
        if not isinstance(expr, ast.Name):
            return None
        kind = self.resolve(expr.id, scope)
        if kind == "class":
            return expr.id
        if kind == "alias" and self.top.get(self.aliases.get(expr.id)) == "class":
            return self.aliases[expr.id]
        return None


def check_names(tree, b):
    """Every name an annotation, decorator, base or alias uses means a
    type where it is used (a method named int makes "-> int" in its class
    mean the method, which type checkers refuse)."""

    def types(expr, scope, where):
        if expr is None:
            return
        for node in ast.walk(expr):
            if isinstance(node, ast.Name):
                kind = b.resolve(node.id, scope)
                if kind not in ("import", "class", "alias", "builtin"):
                    raise Fail("%s: %s means %s there, not a type" % (where, node.id, kind))

    def function(fn, scope, where):
        a = fn.args
        for arg in a.posonlyargs + a.args + a.kwonlyargs:
            types(arg.annotation, scope, where + "(" + arg.arg + ")")
        types(fn.returns, scope, where + " ->")
        for d in fn.decorator_list:
            if not (isinstance(d, ast.Attribute) and d.attr == "setter"):
                types(d, scope, where + " @")

    for n in tree.body:
        if isinstance(n, ast.FunctionDef):
            function(n, None, n.name)
        elif isinstance(n, ast.Assign):
            types(n.value, None, "the alias " + n.targets[0].id)
        elif isinstance(n, ast.ClassDef):
            for base in n.bases:
                types(base, None, "class " + n.name)
            for m in n.body:
                if isinstance(m, ast.FunctionDef):
                    function(m, b.scopes[n.name], n.name + "." + m.name)
                elif isinstance(m, ast.AnnAssign):
                    types(m.annotation, b.scopes[n.name], n.name + "." + m.target.id)


def check_classes(fn, d, b, scope, where):
    """Each parameter and result that is an object of a class of the
    module is annotated with that class."""
    a = fn.args
    args = a.posonlyargs + a.args + a.kwonlyargs
    if d["method"]:
        args = args[1:]
    for arg, p in zip(args, d["params"]):
        if p[3] is not None and b.class_of(arg.annotation, scope) != p[3]:
            raise Fail("%s: parameter %s is annotated %s, not class %s" % (where, arg.arg, ast.unparse(arg.annotation), p[3]))
    if d.get("result") is not None and b.class_of(fn.returns, scope) != d["result"]:
        raise Fail("%s: the result is annotated %s, not class %s" % (where, ast.unparse(fn.returns), d["result"]))


def same(got, want):
    """Whether a default read back is the one the definition gave."""
    kind, v = want
    if kind == "float":
        return isinstance(got, float) and (math.isnan(got) and math.isnan(float(v)) or
                                           struct.pack("d", got) == struct.pack("d", float(v)))
    if kind == "f32":
        return isinstance(got, float) and (math.isnan(got) and math.isnan(float(v)) or
                                           struct.pack("f", got) == struct.pack("f", float(v)))
    if kind == "int":
        return type(got) is int and got == int(v)
    if kind == "device":
        return got == (v if isinstance(v, str) else tuple(v))
    if kind == "ellipsis":
        return got is Ellipsis
    return type(got) is type(v) and got == v  # bool, str, None


KINDS = {"p": inspect.Parameter.POSITIONAL_OR_KEYWORD, "k": inspect.Parameter.KEYWORD_ONLY}


def check_params(got, want, where):
    """got: (name, kind, default) read back; want: the definition's
    [name, "p"/"k", default or null, class or null]."""
    if [(n, k) for n, k, _ in got] != [(p[0], KINDS[p[1]]) for p in want]:
        raise Fail("%s: parameters %s, want %s" % (where, [(n, str(k)) for n, k, _ in got], want))
    for (n, _, d), p in zip(got, want):
        if p[2] is None:
            if d is not inspect.Parameter.empty:
                raise Fail("%s: parameter %s has default %r, want none" % (where, n, d))
        elif d is inspect.Parameter.empty or not same(d, p[2]):
            raise Fail("%s: parameter %s has default %r, want %r" % (where, n, d, p[2]))


class Dummy:
    __module__ = "builtins"


def signature_params(sig, method, where):
    try:
        s = inspect._signature_fromstr(inspect.Signature, Dummy, sig)
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        raise Fail("%s: inspect cannot read the text signature %r: %r" % (where, sig, e))
    ps = list(s.parameters.values())
    if method:
        if not ps or ps[0].name != "self" or ps[0].kind is not inspect.Parameter.POSITIONAL_ONLY:
            raise Fail("%s: the text signature %r does not start with $self" % (where, sig))
        ps = ps[1:]
    return [(p.name, p.kind, p.default) for p in ps]


def stub_default(node):
    return eval(compile(ast.Expression(node), "<default>", "eval"), {"__builtins__": {}})


def stub_params(fn, method):
    a = fn.args
    pos = a.posonlyargs + a.args
    defaults = [inspect.Parameter.empty] * (len(pos) - len(a.defaults)) + [stub_default(d) for d in a.defaults]
    out = [(arg.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, d) for arg, d in zip(pos, defaults)]
    out += [(arg.arg, inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.empty if d is None else stub_default(d))
            for arg, d in zip(a.kwonlyargs, a.kw_defaults)]
    return out[1:] if method else out


def find(tree, path):
    if path == "":
        return tree
    node = tree
    for part in path.split("."):
        for n in node.body:
            if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part:
                node = n
                break
        else:
            raise Fail("the stub has no %s" % path)
    return node


def check_stub(stub, defs):
    try:
        compile(stub, "<stub>", "exec")  # ast.parse, and what the compiler refuses (duplicate parameters)
    except SyntaxError as e:
        raise Fail("the stub does not compile: %s (line %s: %r)" % (e.msg, e.lineno, e.text))
    tree = ast.parse(stub)
    b = Bindings(tree)
    check_names(tree, b)
    for d in defs:
        where = d["path"] or "the module"
        node = find(tree, d["path"])
        scope = b.scopes.get(d["path"].split(".")[0]) if "." in d["path"] else None
        if "doc" in d:
            want = d["doc"]
            if "typename" in d:
                want = type_doc(d["typename"], want)
            got = ast.get_docstring(node, clean=True) or ""
            if got != inspect.cleandoc(want):
                raise Fail("%s: the stub's doc %r, __doc__ says %r" % (where, got, want))
        if "params" in d:
            check_params(stub_params(node, d["method"]), d["params"], where + " in the stub")
            check_classes(node, d, b, scope, where + " in the stub")
            check_params(signature_params(d["sig"], d["bound"], where), d["params"], where + "'s text signature")


def main():
    for line in sys.stdin:
        req = json.loads(line)
        if "names" in req:
            out = {"verdicts": [verdict(s) for s in req["names"]]}
        else:
            try:
                check_stub(req["stub"], req["defs"])
                out = {"error": None}
            except Fail as e:
                out = {"error": str(e)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


main()
