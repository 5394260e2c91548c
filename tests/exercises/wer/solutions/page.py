"""The page's Try it examples for the WER exercise (exercise.toml [seam] page), computed at build time."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def try_examples() -> list[dict]:
    """The statement's examples, each with what the reference returns: the page shows them beside each result."""
    reference = _load(HERE / "solutions" / "reference.py", "_wer_reference_for_build")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its tier mark is registered by the tests' conftest, not here
        examples = _load(HERE / "hidden_tests" / "test_examples.py", "_wer_examples_for_build").EXAMPLES
    return [
        {
            "key": key,
            "title": key.replace("_", " "),
            "args": [r, h],
            "kwargs": kwargs,
            "score": reference.word_error_rate(r, h, **kwargs),
        }
        for key, (r, h, kwargs, _) in examples.items()
    ]
