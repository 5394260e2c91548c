"""What the page's Try it panel draws for this exercise, computed at build time (exercise.toml [seam] page).

Runs on the trusted side only: it reads the reference's `explain`; the page gets the data it returns.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent  # the exercise folder

# Besides the statement's examples, the "Try it" panel shows the breakdown of these.
EXTRA_TRY_EXAMPLES: tuple[tuple[str, str, str, dict[str, float]], ...] = (
    ("word order: one chunk here, two in full METEOR", "the cat sat on the mat", "on the mat the cat sat", {}),
    ("shuffled words: still one chunk here", "the quick brown fox jumps over the lazy dog", "the fox quick over dog brown", {}),
    ("scattered matches: three chunks", "the cat sat on the mat", "the dog sat by the mat", {}),
    ("a longer candidate: precision drops", "a small red house", "there is a small and very red house", {}),
)


def breakdown(explain, title: str, reference: str, candidate: str, params: dict[str, float]) -> dict[str, Any]:
    """What the page draws for one input: tokens, which reference word each match used, chunks, figures."""
    e = explain(reference, candidate, **params)
    # Clipped matching uses the reference's copies of a word in order: the k-th matched copy
    # of a word in the candidate is the k-th occurrence of that word in the reference.
    positions: dict[str, list[int]] = {}
    for i, word in enumerate(e["reference_tokens"]):
        positions.setdefault(word, []).append(i)
    used: dict[str, int] = {}
    links = []
    for i, (word, hit) in enumerate(zip(e["candidate_tokens"], e["matched"])):
        if hit:
            links.append([i, positions[word][used.get(word, 0)]])
            used[word] = used.get(word, 0) + 1
    return {
        "title": title,
        "args": [reference, candidate],  # the engine's page shows the call from these
        "kwargs": params,
        "reference": reference,
        "candidate": candidate,
        "params": params,
        "referenceTokens": e["reference_tokens"],
        "candidateTokens": e["candidate_tokens"],
        "links": links,
        "chunks": [list(span) for span in e["chunk_spans"]],
        "m": e["m"],
        "P": e["precision"],
        "R": e["recall"],
        "Fmean": e["fmean"],
        "Pen": e["penalty"],
        "score": e["score"],
    }


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def try_examples() -> list[dict[str, Any]]:
    """The statement's examples, then ours: each with the reference's breakdown for the page to draw."""
    explain = _load(HERE / "solutions" / "reference.py", "_reference_for_build").explain
    examples = _load(HERE / "hidden_tests" / "test_examples.py", "_examples_for_build").EXAMPLES
    tries = [
        {**breakdown(explain, name.replace("_", " "), ref, cand, params), "key": name}
        for name, (ref, cand, params, _) in examples.items()
    ]
    return tries + [breakdown(explain, *example) for example in EXTRA_TRY_EXAMPLES]
