"""The page's Try it examples for the WER exercise (exercise.toml [seam] page), computed at build time."""

from __future__ import annotations

import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
EXAMPLES = [("one insertion", "the cat sat", "the cat sat down"), ("one substitution", "a b c", "a x c")]


def try_examples() -> list[dict]:
    spec = importlib.util.spec_from_file_location("_wer_reference_for_build", HERE / "solutions" / "reference.py")
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    return [{"title": title, "args": [r, h], "score": reference.word_error_rate(r, h)} for title, r, h in EXAMPLES]
