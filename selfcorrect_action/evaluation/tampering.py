"""Static refusals for candidates that would share a process with their tests.

With `isolation: in-process` (and in repository repair) no process boundary stands between
the frozen tests and the code they judge, so a candidate could rewrite the verdict from the
inside. Before any sandbox run, its source is scanned for the ways that is done: reaching
pytest's internals, walking the garbage collector or the call stack for the tests' objects,
tracing hooks, exit handlers that end the run, `os._exit`, patching what assertions rely on
(builtins, math, operator, unittest, numpy.testing, ...), walking `sys.modules`, and naming
the tests' files, conftest files or test reports. A finding is a `contract` failure whose
evidence names the line.

It refuses only what tampers: a SIGALRM handler that raises, `gc.collect()`, `import pytest`
for `pytest.raises`, or `sys.exit(main())` under `if __name__ == "__main__":` (which never
runs when the tests import the module) are ordinary code. It is a tripwire, not a boundary:
code that hides what it calls (built from strings, decoded, exec'd) is not seen, which is why
the process boundary is the default.
"""

from __future__ import annotations

import ast
import fnmatch
import sys
from dataclasses import dataclass
from pathlib import PurePosixPath

MAX_FINDINGS = 5

# Qualified names (after resolving imports) that reach into the test run.
REFUSED_NAMES: dict[str, str] = {
    "sys._getframe": "walks the call stack (the tests' frames hold the expected values)",
    "sys._current_frames": "walks the call stack",
    "inspect.currentframe": "walks the call stack",
    "inspect.stack": "walks the call stack",
    "inspect.trace": "walks the call stack",
    "inspect.getouterframes": "walks the call stack",
    "inspect.getinnerframes": "walks the call stack",
    "traceback.walk_stack": "walks the call stack",
    "traceback.extract_stack": "reads the callers' source lines",
    "traceback.format_stack": "reads the callers' source lines",
    "traceback.print_stack": "reads the callers' source lines",
    "gc.get_objects": "searches the garbage collector for the test run's objects",
    "gc.get_referrers": "searches the garbage collector for the test run's objects",
    "gc.get_referents": "searches the garbage collector for the test run's objects",
    "sys.settrace": "installs a tracing hook over the tests",
    "sys.setprofile": "installs a profiling hook over the tests",
    "threading.settrace": "installs a tracing hook over the tests",
    "threading.setprofile": "installs a profiling hook over the tests",
    "sys.addaudithook": "installs an audit hook over the tests",
    "sys.monitoring": "installs a monitoring hook over the tests",
    "os._exit": "ends the test run from inside (pytest never reports)",
    "posix._exit": "ends the test run from inside (pytest never reports)",
    "ctypes.pythonapi": "patches the interpreter itself",
    "unittest.SkipTest": "turns a test into a skip",
    "unittest.case.SkipTest": "turns a test into a skip",
    "unittest.skip": "turns a test into a skip",
}
REFUSED_MODULES = ("_pytest", "pluggy")
# pytest's API for writing tests (raises, approx, fixture...) is ordinary in any file; these
# parts of it act on the test run itself.
PYTEST_RUN_CONTROL = frozenset({
    "skip", "xfail", "fail", "exit", "importorskip", "hookimpl", "hookspec", "main",
    "console_main", "register_assert_rewrite", "Config", "Session", "Item", "Function",
    "Class", "Module", "Package", "Collector", "File", "Dir", "Directory", "Pytester",
    "Testdir", "PytestPluginManager", "CallInfo", "TestReport", "CollectReport",
    "set_trace", "freeze_includes",
})
# Attributes that only frames, tracebacks, generators and code objects have.
FRAME_ATTRIBUTES = frozenset({
    "f_back", "f_locals", "f_globals", "f_builtins", "f_code", "tb_frame", "gi_frame",
    "cr_frame", "ag_frame", "co_consts",
})
# Modules whose attributes the tests' assertions rely on: patching them rewrites the oracle.
ORACLE_MODULES = ("builtins", "pytest", "_pytest", "unittest", "math", "cmath", "operator",
                  "numpy.testing", "pandas.testing", "difflib", "pprint")
# numpy and pandas classes (np.ndarray.tolist, pd.DataFrame.equals): patched, they lie.
CLASS_PATCHED_MODULES = ("numpy", "pandas")
# Modules a planted `<name>.py` would replace for the tests' later imports.
SHADOWED_MODULES = frozenset(sys.stdlib_module_names) | {
    "pytest", "_pytest", "pluggy", "py", "numpy", "pandas", "conftest"}
# What a star import of the candidate must not replace in the tests: the builtins their
# assertions call, and the modules they compare with.
SHADOWED_BY_STAR = frozenset(dir(__import__("builtins"))) | {
    "pytest", "math", "cmath", "operator", "np", "numpy", "pd", "pandas", "unittest", "re",
    "os", "sys", "json", "statistics", "itertools", "functools", "collections"}
EXITING_CALLS = frozenset({"os._exit", "posix._exit", "sys.exit", "exit", "quit", "os.abort",
                           "os.kill", "os.killpg"})
STACK_ITERATORS = frozenset({"values", "items", "keys", "copy"})


@dataclass(frozen=True)
class Finding:
    line: int
    what: str  # the code, shortened
    why: str

    def describe(self) -> str:
        return f"line {self.line}: `{self.what}` {self.why}"


def scan(source: str, *, test_files: list[str], star_imported: bool = False,
         limit: int | None = MAX_FINDINGS) -> list[Finding]:
    """What in `source` tampers with the tests `test_files` (names in the work dir); at most
    `limit` (None: all), first first. `star_imported`: a test does `from <module> import *`, so the
    module's top-level names become the test's. Code that does not parse has nothing to
    refuse: it fails as syntax when it runs."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    scanner = _Scanner(source, [PurePosixPath(name).name for name in test_files])
    if star_imported:
        scanner.shadowing(tree)
    scanner.visit(tree)
    return sorted(scanner.findings, key=lambda f: f.line)[:limit]


def star_imports(source: str, module: str) -> bool:
    """Whether test code `source` does `from module import *`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.ImportFrom) and node.module == module
               and any(alias.name == "*" for alias in node.names) for node in ast.walk(tree))


def imports(source: str, module: str) -> bool:
    """Whether test code `source` imports `module` (and so would run it in its process)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
                alias.name.split(".")[0] == module for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == module:
            return True
        if isinstance(node, ast.Constant) and node.value == module:
            return True  # importlib.import_module("name"), __import__("name")
    return False


def evidence(findings: list[Finding]) -> str:
    return ("refused before running: the code tampers with the tests that judge it, which "
            "are frozen and shared its process (isolation: in-process): "
            + "; ".join(f.describe() for f in findings)
            + ". Solve the task itself: do not touch the tests, pytest or its report.")


class _Scanner(ast.NodeVisitor):
    def __init__(self, source: str, test_files: list[str]) -> None:
        self.source = source
        self.test_files = set(test_files)
        self.imported: dict[str, str] = {}  # local name -> dotted module path
        self.findings: list[Finding] = []
        self.docstrings: set[int] = set()
        self.functions: dict[str, ast.AST] = {}

    # -- bookkeeping -------------------------------------------------------------------

    def found(self, node: ast.AST, why: str) -> None:
        segment = ast.get_source_segment(self.source, node) or type(node).__name__
        what = " ".join(segment.split())
        finding = Finding(getattr(node, "lineno", 0),
                          what if len(what) <= 80 else what[:77] + "...", why)
        if all((f.line, f.why) != (finding.line, finding.why) for f in self.findings):
            self.findings.append(finding)

    def qualified(self, node: ast.AST) -> str | None:
        """`np.testing.assert_allclose` -> "numpy.testing.assert_allclose" when `np` names
        an imported module (or a name imported from one)."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.imported.get(node.id)
        if root is None:
            return None
        return ".".join([root, *reversed(parts)])

    # -- the module's structure ---------------------------------------------------------

    def visit_Module(self, node: ast.Module) -> None:
        self._docstring(node)
        for statement in node.body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions[statement.name] = statement
        for statement in node.body:
            if _main_guard(statement):
                continue  # never runs when the tests import the module
            self.visit(statement)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._docstring(node)
        if node.name not in ("__next__", "__anext__") and not _generator(node):
            for inner in _own_statements(node):
                if isinstance(inner, ast.Raise) and _names_stop(inner.exc):
                    self.found(inner, "raises StopIteration from a function, which ends the "
                               "tests' own loops (map, all, a generator expression) early")
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._docstring(node)
        for statement in node.body:
            if _equal_to_everything(statement):
                self.found(statement, "makes objects equal to everything (an assertion "
                           "`result == expected` could not fail)")
        self.generic_visit(node)

    def _docstring(self, node: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                   ) -> None:
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            self.docstrings.add(id(body[0].value))

    def shadowing(self, tree: ast.Module) -> None:
        """Top-level names that a star import hands the tests in place of Python's own."""
        for statement in tree.body:
            for name, node in _bound_names(statement):
                if name in SHADOWED_BY_STAR:
                    self.found(node, f"defines {name}, which a test that does `from "
                               "<module> import *` would take for its own")

    # -- imports --------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            if alias.asname:
                self.imported[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                self.imported[top] = top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        self._check_module(node, module)
        for alias in node.names:
            dotted = f"{module}.{alias.name}" if module else alias.name
            self.imported[alias.asname or alias.name] = dotted
            self._check_name(node, dotted)

    def _check_module(self, node: ast.AST, module: str) -> None:
        if module.split(".")[0] in REFUSED_MODULES:
            self.found(node, "reaches pytest's internals")

    def _check_name(self, node: ast.AST, dotted: str) -> bool:
        if dotted in REFUSED_NAMES:
            self.found(node, REFUSED_NAMES[dotted])
            return True
        head, _, rest = dotted.partition(".")
        if head in REFUSED_MODULES:
            self.found(node, "reaches pytest's internals")
            return True
        if head == "pytest" and rest and rest.split(".")[0] in PYTEST_RUN_CONTROL:
            self.found(node, f"uses pytest.{rest.split('.')[0]}, which acts on the test run "
                       "itself")
            return True
        return False

    # -- names and attributes -------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in FRAME_ATTRIBUTES:
            self.found(node, "reads a frame or code object (the tests' frames hold the "
                       "expected values)")
            return
        dotted = self.qualified(node)
        if dotted is not None and self._check_name(node, dotted):
            return
        if (node.attr in STACK_ITERATORS and self.qualified(node.value) == "sys.modules"):
            self.found(node, "walks every loaded module (the tests' among them)")
            return
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        # A name imported from a module was checked at its import.
        if node.id == "__builtins__" and not isinstance(node.ctx, ast.Load):
            self.found(node, "replaces the builtins the tests rely on")

    def visit_For(self, node: ast.For) -> None:
        self._iterates_modules(node.iter)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._iterates_modules(node.iter)
        self.generic_visit(node)

    def _iterates_modules(self, node: ast.AST) -> None:
        if self.qualified(node) == "sys.modules":
            self.found(node, "walks every loaded module (the tests' among them)")

    # -- calls ----------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        called = self.qualified(node.func) or (
            node.func.id if isinstance(node.func, ast.Name) else None)
        if called in ("list", "dict", "tuple", "set", "sorted", "vars", "iter") and node.args:
            self._iterates_modules(node.args[0])
        if called in ("setattr", "delattr") and node.args:
            self._patches(node, node.args[0])
        if called == "atexit.register" and node.args and self._exits(node.args[0]):
            self.found(node, "registers an exit handler that ends the test run")
        if called == "signal.signal" and len(node.args) > 1 and self._exits(node.args[1]):
            self.found(node, "installs a signal handler that ends the test run")
        self.generic_visit(node)

    def _exits(self, handler: ast.AST) -> bool:
        """A handler that ends the process: os._exit, sys.exit... or a function (lambda,
        local def) that calls one."""
        name = self.qualified(handler) or (handler.id if isinstance(handler, ast.Name) else "")
        if name in EXITING_CALLS:
            return True
        body: ast.AST | None = handler if isinstance(handler, ast.Lambda) else (
            self.functions.get(handler.id) if isinstance(handler, ast.Name) else None)
        if body is None:
            return False
        for inner in ast.walk(body):
            if isinstance(inner, ast.Call):
                called = self.qualified(inner.func) or (
                    inner.func.id if isinstance(inner.func, ast.Name) else "")
                if called in EXITING_CALLS:
                    return True
            if isinstance(inner, ast.Raise) and isinstance(inner.exc, ast.Name | ast.Call):
                raised = inner.exc.func if isinstance(inner.exc, ast.Call) else inner.exc
                if isinstance(raised, ast.Name) and raised.id in ("SystemExit",
                                                                  "KeyboardInterrupt"):
                    return True
        return False

    # -- assignments ----------------------------------------------------------------------

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._assigned(node, target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._assigned(node, node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._assigned(node, target)
        self.generic_visit(node)

    def _assigned(self, node: ast.AST, target: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            self._patches(node, target.value, target.attr)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and (
                target.value.id == "__builtins__"):
            self.found(node, "replaces the builtins the tests rely on")
        elif isinstance(target, ast.Tuple | ast.List):
            for item in target.elts:
                self._assigned(node, item)

    def _patches(self, node: ast.AST, owner: ast.AST, attr: str = "") -> None:
        dotted = self.qualified(owner)
        if dotted is None:
            if isinstance(owner, ast.Name) and owner.id == "__builtins__":
                self.found(node, "replaces the builtins the tests rely on")
            return
        if any(dotted == m or dotted.startswith(m + ".") for m in ORACLE_MODULES):
            self.found(node, f"patches {dotted}, which the tests' assertions rely on")
            return
        head, _, rest = dotted.partition(".")
        if head in CLASS_PATCHED_MODULES and rest and rest.split(".")[-1][:1].isupper():
            self.found(node, f"patches {dotted}, which the tests' assertions rely on")

    # -- strings --------------------------------------------------------------------------

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and id(node) not in self.docstrings:
            why = self._names_the_tests(node.value)
            if why:
                self.found(node, why)

    def _names_the_tests(self, text: str) -> str:
        lowered = text.lower()
        if len(text) > 300:
            return ""
        base = PurePosixPath(text).name if "/" in text else text
        if base in self.test_files:
            return "names a frozen test file"
        if "conftest" in lowered:
            return "names a conftest file (pytest loads it before the tests)"
        if "junit" in lowered and ".xml" in lowered:
            return "names the test report"
        if ".selfcorrect" in lowered:
            return "names the test run's own folder"
        if lowered.endswith(".pth") or "sitecustomize" in lowered or "usercustomize" in lowered:
            return "names a file Python runs at start-up"
        if lowered.startswith(REFUSED_MODULES):
            return "names pytest's internals"
        # A source, bytecode or native extension module (`json.cpython-311-...so`) that an
        # import of that name would load instead of the real one.
        stem = base.split(".")[0] if base.endswith((".py", ".pyc", ".so", ".pyd")) else ""
        if stem in SHADOWED_MODULES:
            return f"names a file that would stand in for the module {stem} in the tests' imports"
        if "*" in text and "test" in lowered and any(
                fnmatch.fnmatch(name, base.lower()) for name in ("test_x.py", "x_test.py")):
            return "looks for test files"
        return ""


def _equal_to_everything(statement: ast.stmt) -> bool:
    """`def __eq__(self, other): return True` (every return a true constant), or
    `__eq__ = lambda *a: True`; likewise `__ne__` always false."""
    def constant(node: ast.AST | None, wanted: bool) -> bool:
        return isinstance(node, ast.Constant) and bool(node.value) is wanted and (
            node.value is not None)

    if isinstance(statement, ast.FunctionDef) and statement.name in ("__eq__", "__ne__"):
        wanted = statement.name == "__eq__"
        returns = [n for n in ast.walk(statement) if isinstance(n, ast.Return)]
        return bool(returns) and all(constant(r.value, wanted) for r in returns)
    if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Lambda):
        names = {t.id for t in statement.targets if isinstance(t, ast.Name)}
        for name, wanted in (("__eq__", True), ("__ne__", False)):
            if name in names and constant(statement.value.body, wanted):
                return True
    return False


def _generator(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(node, ast.Yield | ast.YieldFrom) for node in _own_statements(function))


def _own_statements(function: ast.AST) -> list[ast.AST]:
    """The nodes of a function's body, not those of the functions and classes inside it."""
    found, stack = [], list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _names_stop(raised: ast.AST | None) -> bool:
    target = raised.func if isinstance(raised, ast.Call) else raised
    return isinstance(target, ast.Name) and target.id in ("StopIteration",
                                                           "StopAsyncIteration")


def _bound_names(statement: ast.stmt) -> list[tuple[str, ast.AST]]:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [(statement.name, statement)]
    targets: list[ast.AST] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
        targets = [statement.target]
    elif isinstance(statement, ast.Import | ast.ImportFrom):
        return [((alias.asname or alias.name).split(".")[0], statement)
                for alias in statement.names if alias.name != "*"]
    found: list[tuple[str, ast.AST]] = []
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                found.append((node.id, statement))
    return found


def _main_guard(statement: ast.stmt) -> bool:
    """`if __name__ == "__main__":`"""
    if not isinstance(statement, ast.If) or not isinstance(statement.test, ast.Compare):
        return False
    test = statement.test
    sides = [test.left, *test.comparators]
    return (len(sides) == 2 and isinstance(test.ops[0], ast.Eq)
            and any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
            and any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides))
