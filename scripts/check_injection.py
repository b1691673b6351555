"""No test injects a part into a client by assigning to it (issue 59): a test hands a
client its locator, pool, producer or clock through the constructor, as the product does.

Flagged, in the files given (default: every ``tests/**/*.py``):

* ``obj.attr = value`` where ``obj`` is an object the test holds (not ``self``/``cls``, not
  an imported module or class) and ``attr`` is private (``_pool``) or names a part
  (``locator``, ``pool``, ``producer``, ...);
* ``setattr(obj, "attr", value)`` or ``monkeypatch.setattr(obj, "attr", value)`` with the
  name written out, when it names a part (``locator``, ``_pool``): a patched method that
  simulates a race is a test's own business.

``python scripts/check_injection.py [FILE ...]`` prints one line per finding
(``file:line: ...``) and exits 1 when there is any.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# the parts a client is built from: given to its constructor, never assigned afterwards
PARTS = frozenset({
    "locator", "locate", "pool", "connection", "connections", "channel", "transport",
    "scanner", "dispatch", "writes", "registry", "producer", "consumer", "admin",
    "client", "session", "clock", "sleep", "retry", "policy"})


def _root(node: ast.expr) -> str | None:
    """The name an attribute chain starts from (``a`` of ``a.b.c``), if it is a name."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _imported(tree: ast.Module) -> set[str]:
    """Names bound by an import anywhere in the module (modules, classes, functions)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _part(attr: str) -> bool:
    return attr.lstrip("_") in PARTS


def _private(attr: str) -> bool:
    return attr.startswith("_") and not attr.startswith("__")


def _setattr_call(node: ast.Call) -> tuple[ast.expr, str] | None:
    """``(obj, name)`` of ``setattr(obj, "name", v)`` / ``<x>.setattr(obj, "name", v)``."""
    func = node.func
    named = (isinstance(func, ast.Name) and func.id == "setattr") or (
        isinstance(func, ast.Attribute) and func.attr == "setattr")
    if not named or len(node.args) != 3:
        return None
    name = node.args[1]
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        return node.args[0], name.value
    return None


def findings(path: Path) -> list[str]:
    """One line per injection by assignment in the test module at ``path``, in line
    order."""
    return [line for _, line in sorted(_found(path))]


def _found(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    outside = _imported(tree) | {"self", "cls"}
    for node in ast.walk(tree):
        targets: list[tuple[ast.expr, str]] = []
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Attribute) and (_private(target.attr)
                                                          or _part(target.attr)):
                    targets.append((target.value, target.attr))
        elif (isinstance(node, ast.Call) and (found := _setattr_call(node)) is not None
              and _part(found[1])):
            targets.append(found)
        for obj, attr in targets:
            root = _root(obj)
            if root is not None and root not in outside:
                line = getattr(node, "lineno", 0)
                yield line, (f"{path}:{line}: assigns {ast.unparse(obj)}.{attr}: give the part "
                             "to the constructor instead of assigning it to the object")


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((REPO / "tests").rglob("*.py"))
    found = [line for path in paths for line in findings(path)]
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} injection(s) by assignment in tests", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
