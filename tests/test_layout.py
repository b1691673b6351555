"""The suite's layout: no module of ``tests/`` imports a test module (a ``test_*.py``), in
any form (``import tests.a.test_b``, ``from tests.a.test_b import x``, ``from tests.a import
test_b``, ``from .test_b import x``, ``import test_b`` beside it). What two test modules
share lives in a support module beside them (``tests/<area>/<what>.py``) or in
``tests/support/``: importing a test module runs its module-level code again for the
importer, ties the two together, and under some import modes collects its tests twice."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _base(path: Path) -> Path:
    """The folder pytest puts on ``sys.path`` for ``path`` (rootdir-less ``prepend``): the
    first one up from it that is not a package."""
    folder = path.parent
    while (folder / "__init__.py").exists():
        folder = folder.parent
    return folder


def _named(dotted: str, roots: list[Path]) -> Path | None:
    """The test module ``dotted`` is, found under the first root holding it (only a name
    whose last part starts with ``test_`` can be one)."""
    if not dotted.rpartition(".")[2].startswith("test_"):
        return None
    for root in roots:
        candidate = root.joinpath(*dotted.split(".")).with_suffix(".py")
        if candidate.is_file():
            return candidate
    return None


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body`` and of the blocks within it, at any depth (an import
    is a statement: no expression need be walked)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)
        for block in [*getattr(node, "handlers", ()), *getattr(node, "cases", ())]:
            yield from _statements(block.body)


def _imports(path: Path) -> Iterator[tuple[int, Path]]:
    """``(line, file)`` of each test module that ``path`` imports."""
    roots = [_base(path)]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in _statements(tree.body):
        names: list[tuple[str, list[Path]]] = []
        if isinstance(node, ast.Import):
            names = [(alias.name, roots) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            # relative: from the importer's package, up level - 1
            here = [path.parents[node.level - 1]] if node.level else roots
            module = node.module or ""
            names = [(module, here)] if module else []
            names += [(f"{module}.{a.name}" if module else a.name, here) for a in node.names]
        for dotted, where in names:
            found = _named(dotted, where)
            if found is not None:
                yield node.lineno, found


@cache
def imports_of_test_modules(tests: Path = TESTS) -> tuple[tuple[str, int, str], ...]:
    """``(importer, line, imported)``, paths from ``tests``' parent, of every import of a
    test module by another module under ``tests`` (conftests and support modules too)."""
    top = tests.parent
    return tuple(
        (path.relative_to(top).as_posix(), line, found.relative_to(top).as_posix())
        for path in sorted(tests.rglob("*.py")) for line, found in _imports(path)
        if found.resolve() != path.resolve() and found.is_relative_to(tests))


def test_no_module_of_the_suite_imports_a_test_module() -> None:
    found = imports_of_test_modules()
    assert not found, "\n".join(
        f"{importer}:{line} imports the test module {imported}: move what they share into "
        "a support module beside them (not named test_*) and import it from there"
        for importer, line, imported in found)


def test_the_check_finds_each_form_of_import(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    for folder in (tests / "area", tests / "support"):
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("")
    (tests / "__init__.py").write_text("")
    (tests / "loose").mkdir()  # no __init__.py: its folder is on sys.path
    files = {
        "area/test_shared.py": "X = 1\n",
        "area/test_a.py": "from tests.area.test_shared import X\n",
        "area/test_b.py": "import tests.area.test_shared\n",
        "area/test_c.py": "from tests.area import test_shared\n",
        "area/test_d.py": "from .test_shared import X\n",
        "area/test_e.py": "from . import test_shared, helpers\n",
        "area/conftest.py": "def f():\n    from tests.area.test_shared import X\n",
        "area/helpers.py": "from .test_shared import X\n",
        "area/test_fine.py": "from tests.area.helpers import X\nfrom tests.support import wait\n"
                             "import tests.area\nimport test_shared\n",  # not on sys.path here
        "support/wait.py": "",
        "loose/test_one.py": "",
        "loose/test_two.py": "import test_one\nfrom test_one import y\n",
    }
    for name, text in files.items():
        (tests / name).write_text(text)
    shared = "tests/area/test_shared.py"
    assert sorted(imports_of_test_modules(tests)) == [
        ("tests/area/conftest.py", 2, shared),
        ("tests/area/helpers.py", 1, shared),
        ("tests/area/test_a.py", 1, shared),
        ("tests/area/test_b.py", 1, shared),
        ("tests/area/test_c.py", 1, shared),
        ("tests/area/test_d.py", 1, shared),
        ("tests/area/test_e.py", 1, shared),
        ("tests/loose/test_two.py", 1, "tests/loose/test_one.py"),
        ("tests/loose/test_two.py", 2, "tests/loose/test_one.py"),
    ]
