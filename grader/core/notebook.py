"""The Python code of a Jupyter notebook: its code cells, without IPython magics or shell lines."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

# `%timeit f()`, `!pip install x`, `files = !ls`, `x = %env HOME`: IPython, not Python.
MAGIC = re.compile(r"^\s*([%!]|\w+\s*=\s*[%!])")


class NotebookError(Exception):
    """The file is not a notebook we can read."""


@dataclass
class Script:
    source: str
    cells: list[tuple[int, int]]  # (first line in the script, cell number) for each code cell

    def where(self, line: int) -> str:
        """`line` of the script as the student sees it: a cell and a line in that cell."""
        for first, number in reversed(self.cells):
            if line >= first:
                return f"cell {number}, line {line - first + 1}"
        return f"line {line}"

    def relabel(self, message: str) -> str:
        """A message about the script, with each "line N" told as the notebook's cell and line."""
        return re.sub(r"\bline (\d+)", lambda m: self.where(int(m.group(1))), message)


def extract(text: str) -> Script:
    try:
        notebook = json.loads(text)
    except ValueError as exc:
        raise NotebookError(f"the notebook is not valid JSON ({exc})") from None
    except RecursionError:  # `[[[[...]]]]` nested deeper than the decoder goes
        raise NotebookError("the notebook is not valid JSON (nested too deeply)") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise NotebookError("the notebook has no list of cells")
    lines: list[str] = []
    starts: list[tuple[int, int]] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        elif not isinstance(source, str):
            raise NotebookError(f"cell {number}'s source is not text")
        cell_lines = source.splitlines()
        if cell_lines and cell_lines[0].lstrip().startswith("%%"):
            cell_lines = ["# (cell magic skipped)"] * len(cell_lines)  # keeps line numbers
        starts.append((len(lines) + 1, number))
        lines += ["# (IPython line skipped)" if MAGIC.search(line) else line for line in cell_lines]
    if not starts:
        raise NotebookError("the notebook has no code cells")
    return Script("\n".join(lines) + "\n", starts)
