"""The shape docs/ARCHITECTURE.md promises and lint-imports cannot see: small modules, benchmarks
outside the product, tests in their layer's folder that share helpers only through tests/support."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from support import ROOT

MAX_LINES = 600


def python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if ".venv" not in p.parts)


def test_no_module_of_the_package_or_the_sdk_is_over_600_lines() -> None:
    modules = python_files(ROOT / "arena") + python_files(ROOT / "clients" / "python" / "arena_bot")
    long = {
        str(p.relative_to(ROOT)): n
        for p in modules
        if "v1" not in p.parts  # generated from the .proto
        and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_package_holds_no_benchmark() -> None:
    assert not (ROOT / "arena" / "bench").exists()
    mentions = [
        str(p.relative_to(ROOT))
        for p in python_files(ROOT / "arena")
        if "arena bench" in p.read_text(encoding="utf-8") or "arena.bench" in p.read_text(encoding="utf-8")
    ]
    assert mentions == []


def test_tests_live_in_their_layers_folder_and_import_no_other_test_module() -> None:
    tests = ROOT / "tests"
    modules = [p for p in python_files(tests) if p.name.startswith("test_")]
    assert [str(p.relative_to(tests)) for p in modules if p.parent == tests] == []
    # Without packages, two test modules of one name would shadow each other.
    assert [name for name, n in Counter(p.name for p in modules).items() if n > 1] == []
    imports_of_tests = []
    for path in python_files(tests):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            imports_of_tests += [f"{path.relative_to(tests)}: {n}" for n in names if n.startswith("test_")]
    assert imports_of_tests == []
