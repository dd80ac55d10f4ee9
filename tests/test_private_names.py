"""Only one module imports a private name of LangGraph or LangChain, each with its fallback,
so that an upgrade that moves one changes one file."""

from __future__ import annotations

import ast
from pathlib import Path

import reasoning_graphs

PACKAGE = Path(reasoning_graphs.__file__).parent
OWNER = PACKAGE / "private_names.py"
LIBRARIES = ("langgraph", "langchain", "langchain_core")


def _private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] not in LIBRARIES:
                continue
            names = [alias.name for alias in node.names]
            if any(part.startswith("_") for part in node.module.split(".")) or any(
                name.startswith("_") for name in names
            ):
                found.append(f"{node.module}: {', '.join(names)}")
        elif isinstance(node, ast.Import):
            found.extend(
                alias.name
                for alias in node.names
                if alias.name.split(".")[0] in LIBRARIES
                and any(part.startswith("_") for part in alias.name.split("."))
            )
    return found


def test_only_the_one_module_imports_private_names() -> None:
    elsewhere = {
        str(path.relative_to(PACKAGE)): found
        for path in PACKAGE.rglob("*.py")
        if path != OWNER and (found := _private_imports(path))
    }
    assert not elsewhere
    assert _private_imports(OWNER)  # the check sees them where they are
