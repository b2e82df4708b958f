"""Every public function, class and method of rbmviz has a numpydoc docstring and type hints.

The public API is what each module's ``__all__`` names (modules found by
:func:`pkgutil.walk_packages`, private ``_`` modules left out), plus what ``rbmviz/__init__.py``
exports, plus the public methods and properties of those classes.  In the explorer's packages
``rbmviz.live`` and ``rbmviz.app``, a module without ``__all__`` (a tab's session module)
contributes every public class and function it defines; the two ``panel serve`` scripts
(:data:`SCRIPTS`) are not imported.  Objects of the modules listed in :data:`EXEMPT` are checked
too, and a failure of theirs is reported as an expected failure with the listed reason.  Each object is checked by :func:`numpydoc.validate.validate`
against the checks below, and by two checks numpydoc does not have: a ``Raises`` section when the
function itself raises, and annotations on every parameter and on the return value.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

import rbmviz  # noqa: E402

#: numpydoc checks every public object must pass (see ``numpydoc.validate.ERROR_MSGS``)
CHECKS = {
    "GL08": "has a docstring",
    "SS01": "has a summary line",
    "PR01": "documents every parameter",
    "PR02": "documents no parameter the signature does not have",
    "PR07": "describes every documented parameter",
    "RT01": "has a Returns section when it returns something",
}
#: exceptions that are not raised on bad input (abstract methods, the CLI's exit)
NOT_BAD_INPUT = {"NotImplementedError", "SystemExit", "KeyboardInterrupt", "StopIteration"}
#: the explorer's packages: a module without ``__all__`` contributes what it defines
EXPLORER_PACKAGES = ("rbmviz.app", "rbmviz.live")
#: modules that are scripts, not libraries: importing one has the effect it exists for
SCRIPTS = {
    "rbmviz.app.explorer": "the script panel serve runs: importing it serves the explorer",
    "rbmviz.app.warm_start": "panel serve's --setup script: importing it starts the warm-up",
}


#: modules whose docstrings are another change's to bring up to the standard, ``{module:
#: reason}``: their objects are still checked, and one that fails is reported as an expected
#: failure naming the reason (an object of theirs that passes passes); remove a module once
#: its objects pass.  Empty: every module meets the standard.
EXEMPT: dict[str, str] = {}


def _exempt(name, problems):
    """Report ``problems`` of ``name`` as an expected failure when its module is exempt."""
    module = next((m for m in EXEMPT if name.startswith(m + ".")), None)
    if problems and module is not None:
        pytest.xfail(f"{EXEMPT[module]}: {problems}")


def _public_modules():
    names = ["rbmviz"]
    for info in pkgutil.walk_packages(rbmviz.__path__, "rbmviz."):
        if info.name in SCRIPTS:
            continue
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        names.append(info.name)
    return names


def _public_names(module):
    """What ``module`` makes public: its ``__all__``; in the explorer's packages, a module
    without one makes public every class and function it defines without a leading ``_``."""
    if hasattr(module, "__all__") or not module.__name__.startswith(EXPLORER_PACKAGES):
        return getattr(module, "__all__", ())
    return [name for name, obj in vars(module).items() if not name.startswith("_")
            and (inspect.isclass(obj) or inspect.isfunction(obj))
            and obj.__module__ == module.__name__]


def _public_objects():
    """``{qualified name: object}`` of every public function, class, method and property."""
    found = {}
    OWNERS.clear()
    for module_name in _public_modules():
        module = importlib.import_module(module_name)
        for name in _public_names(module):
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            owner = getattr(obj, "__module__", "") or ""
            if not owner.startswith("rbmviz"):
                continue
            qualname = f"{owner}.{obj.__qualname__}"
            found.setdefault(qualname, obj)
            if inspect.isclass(obj):
                for attr, value in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if inspect.isfunction(value) or isinstance(
                            value, (classmethod, staticmethod, property)):
                        found.setdefault(f"{qualname}.{attr}", value)
                        OWNERS.setdefault(f"{qualname}.{attr}", (obj, attr))
    return found


#: ``{qualified name of a method: (its class, attribute name)}``
OWNERS = {}


OBJECTS = _public_objects()


def _documented_name(name):
    """The name whose docstring documents ``name``.

    A method that overrides a documented method of a base class without a docstring of its own
    inherits the base's (as Sphinx's autodoc shows it); every other object documents itself.
    """
    if name not in OWNERS:
        return name
    cls, attr = OWNERS[name]
    own = _function(vars(cls)[attr])
    if own is None or own.__doc__:
        return name
    for base in cls.__mro__[1:]:
        value = vars(base).get(attr)
        if value is not None and getattr(_function(value), "__doc__", None):
            return f"{base.__module__}.{base.__qualname__}.{attr}"
    return name


def _function(obj):
    """The function whose signature and body belong to ``obj`` (``None`` if it has none)."""
    if isinstance(obj, property):
        return obj.fget
    if isinstance(obj, (classmethod, staticmethod)):
        return obj.__func__
    if inspect.isclass(obj):
        return vars(obj).get("__init__")
    return obj if inspect.isfunction(obj) else None


def _own_raises(node):
    """The exception names raised in ``node``'s own body (not in nested functions or classes)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(child, ast.Raise) and child.exc is not None:
            exc = child.exc.func if isinstance(child.exc, ast.Call) else child.exc
            yield exc.id if isinstance(exc, ast.Name) else getattr(exc, "attr", "?")
        yield from _own_raises(child)


def test_the_public_api_is_found():
    assert len(OBJECTS) > 300
    assert "rbmviz.model.RBM" in OBJECTS and "rbmviz.model.RBM.free_energy" in OBJECTS
    # the explorer's engines and tabs, with and without __all__
    for name in ("rbmviz.live.race.Race", "rbmviz.live.race.Race.update_settings",
                 "rbmviz.live.loop.BackgroundLoop.discard_pending", "rbmviz.live.lessons.Lesson",
                 "rbmviz.app.bias_tab.BiasSession.reset", "rbmviz.app.feed.DocumentFeed",
                 "rbmviz.app.layout.build", "rbmviz.app.race_tab.ExplorerSession"):
        assert name in OBJECTS, name
    assert not any(name.startswith(tuple(SCRIPTS)) for name in OBJECTS)


def test_exemptions_name_modules_of_the_explorer_that_are_checked():
    """Every exempt module exists, is in the explorer's packages and has objects checked (an
    exemption is a listed, explained expected failure, not a module left out)."""
    for module in EXEMPT:
        assert module.startswith(EXPLORER_PACKAGES) and module in _public_modules(), module
        assert any(name.startswith(module + ".") for name in OBJECTS), module


def _only_param_name(obj, message):
    """Whether a PR01 message only misses ``name``, which every ``param.Parameterized`` takes."""
    if not (inspect.isclass(obj) and any(c.__name__ == "Parameterized" for c in obj.__mro__)):
        return False
    return ast.literal_eval(message.split("Parameters ", 1)[1].split(" not documented")[0]) == {"name"}


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_numpydoc(name):
    obj = OBJECTS[name]
    result = numpydoc_validate.validate(_documented_name(name))
    checks = set(CHECKS)
    if isinstance(obj, property) or inspect.isclass(obj):
        checks.discard("RT01")       # attributes and constructors return nothing to document
    func = _function(obj)
    if func is not None and any(p.kind is inspect.Parameter.VAR_KEYWORD
                                for p in inspect.signature(func).parameters.values()):
        checks.discard("PR02")       # the keywords ``**kwargs`` takes are documented by name
    errors = [f"{code}: {message}" for code, message in result["errors"] if code in checks
              and not (code == "PR01" and _only_param_name(obj, message))]
    _exempt(name, errors)
    assert not errors, f"{name}:\n  " + "\n  ".join(errors)


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_raises_section(name):
    func = _function(OBJECTS[name])
    if func is None:
        pytest.skip("no function body")
    try:
        source = inspect.getsource(func)
    except OSError:             # generated (a dataclass's __init__): raises nothing of its own
        return
    tree = ast.parse(textwrap.dedent(source))
    raised = set(_own_raises(tree.body[0])) - NOT_BAD_INPUT
    if not raised:
        return
    doc = inspect.getdoc(_function(OBJECTS[name]) if name in OWNERS else OBJECTS[name]) or ""
    _exempt(name, [] if "\nRaises\n------" in doc else [f"raises {sorted(raised)}"])
    assert "\nRaises\n------" in doc, f"{name} raises {sorted(raised)} but has no Raises section"


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_type_hints(name):
    func = _function(OBJECTS[name])
    if func is None:
        pytest.skip("no signature of its own")
    signature = inspect.signature(func)
    missing = [p.name for p in signature.parameters.values()
               if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
    if func.__name__ != "__init__" and signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    _exempt(name, missing)
    assert not missing, f"{name}: no annotation on {missing}"
