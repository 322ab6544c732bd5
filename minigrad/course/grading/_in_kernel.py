"""What the grader runs inside a student's kernel, to run one released check cell.

The grader never imports this module in the kernel: an import goes through ``sys.modules``,
which a notebook cell could have patched beforehand. It sends this file's *source* and
``exec``-s it in a private namespace named ``__minigrad_grader__`` with one more name, ``ARGS``
(a dict); the last lines then run :func:`run_check`. Nothing here is left in the student's
namespace.

One run:

1. drops the checks package (``minigrad.course.checks`` and its submodules) from ``sys.modules`` and
   from its parent package, and imports it afresh, so a notebook cell that replaced a check
   function, or the whole module, gains nothing; the names it replaced are reported;
2. runs the released check cell's source in a *copy* of the student's namespace, with
   ``checks`` bound to the fresh package: the student's objects, the grader's checks;
3. appends the outcome as one JSON line to the results file the grader reads.

Only the standard library and IPython are used, imported inside the functions.
"""


def _origin(obj):
    """Where a function or class comes from: enough to tell a replaced one from the original."""
    code = getattr(obj, "__code__", None)
    if code is not None:
        return ("function", code.co_filename, code.co_firstlineno)
    if isinstance(obj, type):
        return ("class", getattr(obj, "__module__", None), getattr(obj, "__qualname__", None))
    return None


def _replaced(old_modules, new_modules):
    """Names in the old checks modules that differ from the freshly imported ones.

    ``old_modules`` is a list of ``(name, module)`` pairs: a name may come more than once (the
    module in ``sys.modules`` and an older one the notebook still holds as ``checks``).
    """
    import types

    replaced = []
    for name, old in old_modules:
        new = new_modules.get(name)
        if new is None:
            continue
        if not isinstance(old, types.ModuleType) or getattr(old, "__file__", None) != getattr(
                new, "__file__", None):
            replaced.append(f"{name} (the whole module)")
            continue
        old_vars, new_vars = vars(old), vars(new)
        for attr, new_value in new_vars.items():
            origin = _origin(new_value)
            if origin is None:
                continue
            old_value = old_vars.get(attr)
            if _origin(old_value) != origin:
                replaced.append(f"{name}.{attr}")
            elif isinstance(new_value, type) and isinstance(old_value, type):
                for method, new_fn in vars(new_value).items():
                    new_origin = _origin(new_fn)
                    old_origin = _origin(vars(old_value).get(method))
                    if new_origin is not None and old_origin != new_origin:
                        replaced.append(f"{name}.{attr}.{method}")
    return list(dict.fromkeys(replaced))


def _from_notebook(obj):
    """True for a function whose code was typed in a notebook cell (or exec'd from a string)."""
    code = getattr(obj, "__code__", None)
    if code is None:
        return False
    filename = code.co_filename
    return filename.startswith("<") or "ipykernel_" in filename


def _suspicious(package):
    """Module-level functions of numpy and of the engine that a notebook cell replaced.

    The grader does not undo these (the student's objects are built on the engine); it only
    reports them for a human to look at.
    """
    import sys

    found = []
    for name, module in list(sys.modules.items()):
        top = name.partition(".")[0]
        if name not in ("numpy", "numpy.testing") and top != "minigrad":
            continue
        if name == package or name.startswith(package + ".") or name.startswith(
                "minigrad.course.grading"):
            continue
        try:
            items = list(vars(module).items())
        except TypeError:
            continue
        found.extend(f"{name}.{attr}" for attr, value in items if _from_notebook(value))
    return found


def _in_package(value, package):
    import types

    name = getattr(value, "__name__", None) if isinstance(value, types.ModuleType) else None
    return isinstance(name, str) and (name == package or name.startswith(package + "."))


def _reload(package, lesson_module, user_ns):
    """Import the checks package afresh; return the fresh package and what had been replaced.

    The old modules are those in ``sys.modules`` and those the notebook's names still hold
    (``checks`` and its submodules, from an earlier import), so a patch to either is reported.
    """
    import importlib
    import sys

    old = {name: module for name, module in sys.modules.items() if name == package
           or name.startswith(package + ".")}
    held = [value for value in list(user_ns.values()) if _in_package(value, package)]
    held += [sub for value in held for sub in list(vars(value).values())
             if _in_package(sub, package)]
    for name in old:
        del sys.modules[name]
    parent, _, attr = package.rpartition(".")
    if parent and parent in sys.modules:
        vars(sys.modules[parent]).pop(attr, None)
    importlib.invalidate_caches()
    fresh = importlib.import_module(package)
    importlib.import_module(lesson_module)
    new = {name: module for name, module in sys.modules.items() if _in_package(module, package)}
    pairs = list(old.items()) + [(module.__name__, module) for module in held]
    return fresh, _replaced(pairs, new)


def _where(exc):
    """The innermost line of notebook code in the traceback, as ``line N ...: code``.

    A check that wraps the student's error (``raise CheckFailed(...) from error``) keeps the
    student's frames in the cause, so the chain of causes is searched too.
    """
    import linecache
    import traceback

    frames, seen = [], set()
    while exc is not None and id(exc) not in seen and not frames:
        seen.add(id(exc))
        frames = [frame for frame in traceback.extract_tb(exc.__traceback__)
                  if frame.filename.startswith("<ipython-input") or "ipykernel_" in frame.filename]
        exc = exc.__cause__ or exc.__context__
    if not frames:
        return ""
    frame = frames[-1]
    line = (frame.line or linecache.getline(frame.filename, frame.lineno)).strip()
    return f"line {frame.lineno} of your code, in {frame.name}: {line}" if line else ""


def _kind(exc, fresh):
    check_failed = getattr(fresh, "CheckFailed", None)
    if (isinstance(check_failed, type) and isinstance(exc, check_failed)) or \
            type(exc).__name__ == "CheckFailed":
        return "check"
    if isinstance(exc, NotImplementedError):
        return "not implemented"
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    return "error"


def run_check(args):
    """Run one released check cell in the student's kernel and append its outcome."""
    import contextlib
    import io
    import json
    import sys
    import time

    from IPython import get_ipython

    package, limit = args["package"], int(args["max_chars"])
    record = {"step": args["step"], "check": args["check"], "replaced": [], "suspicious": []}
    output = io.StringIO()
    start = time.perf_counter()
    fresh = None
    try:
        shell = get_ipython()
        fresh, record["replaced"] = _reload(package, args["lesson_module"], shell.user_ns)
        record["suspicious"] = _suspicious(package)
        namespace = dict(shell.user_ns)
        for name, value in list(namespace.items()):  # other names bound to old checks modules
            if _in_package(value, package):
                namespace[name] = sys.modules.get(value.__name__, value)
        namespace[args["alias"]] = fresh
        code = compile(shell.transform_cell(args["source"]), f"<check {args['check']}>", "exec")
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            exec(code, namespace)
    except BaseException as exc:  # the student's code may raise anything, even SystemExit
        kind = _kind(exc, fresh)
        message = str(exc) if kind == "check" else f"{type(exc).__name__}: {exc}".rstrip(": ")
        record.update(passed=False, kind=kind, message=message[:limit], where=_where(exc))
    else:
        record.update(passed=True, kind="passed", message="", where="")
    record["seconds"] = round(time.perf_counter() - start, 4)
    record["output"] = output.getvalue()[:limit]
    with open(args["results"], "a", encoding="utf-8") as results:
        results.write(json.dumps(record, default=str) + "\n")


if __name__ == "__minigrad_grader__":  # only when the grader runs this source in a kernel
    run_check(ARGS)  # noqa: F821 -- ARGS is given by the grader along with the source
