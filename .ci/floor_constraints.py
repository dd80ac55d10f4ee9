"""Print a pip constraints file that pins each direct dependency to its floor.

Reads ``pyproject.toml``: every ``name>=floor`` of ``[project].dependencies``,
and of the optional-dependency groups named on the command line, becomes
``name==floor``. pip then installs the lowest versions the project says it
supports, so the floor job tests exactly what ``>=`` promises.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

FLOOR = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*[^;]*?>=\s*([^,;\s]+)")


def floors(requirements: list[str]) -> dict[str, str]:
    """``{name: floor}`` for each requirement with a ``>=`` bound."""
    pinned = {}
    for requirement in requirements:
        match = FLOOR.match(requirement)
        if match:
            pinned[match.group(1).lower()] = match.group(2)
    return pinned


def main(pyproject: Path, groups: list[str]) -> str:
    project = tomllib.loads(pyproject.read_text())["project"]
    requirements = list(project["dependencies"])
    for group in groups:
        requirements += project["optional-dependencies"][group]
    return "".join(f"{name}=={floor}\n" for name, floor in floors(requirements).items())


if __name__ == "__main__":
    sys.stdout.write(main(Path(sys.argv[1]), sys.argv[2:]))
