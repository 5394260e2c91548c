"""Reference solution of the METEOR exercise (never shipped to the browser)."""

from __future__ import annotations

import math
from collections import Counter

DECIMALS = 3


def _check_text(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")


def _check_param(name: str, value: object, low: float, high: float | None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if math.isnan(value) or value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name} must be {bounds}, got {value!r}")
    return float(value)


def explain(reference, candidate, alpha=0.9, beta=3, gamma=0.5) -> dict:
    """Every intermediate value of the score, for feedback and the page's breakdown."""
    _check_text("reference", reference)
    _check_text("candidate", candidate)
    alpha = _check_param("alpha", alpha, 0.0, 1.0)
    beta = _check_param("beta", beta, 0.0, None)
    gamma = _check_param("gamma", gamma, 0.0, 1.0)
    if math.isinf(beta):
        raise ValueError("beta must be finite")

    ref_tokens = reference.lower().split()
    cand_tokens = candidate.lower().split()

    # Clipped matching: each reference word can be used once, candidate scanned left to right.
    unused = Counter(ref_tokens)
    matched: list[bool] = []
    for word in cand_tokens:
        hit = unused[word] > 0
        if hit:
            unused[word] -= 1
        matched.append(hit)

    m = sum(matched)
    chunk_spans: list[tuple[int, int]] = []
    for i, hit in enumerate(matched):
        if hit and (i == 0 or not matched[i - 1]):
            chunk_spans.append((i, i + 1))
        elif hit:
            chunk_spans[-1] = (chunk_spans[-1][0], i + 1)
    chunks = len(chunk_spans)

    result = {
        "reference_tokens": ref_tokens,
        "candidate_tokens": cand_tokens,
        "matched": matched,
        "chunk_spans": chunk_spans,
        "m": m,
        "chunks": chunks,
        "precision": 0.0,
        "recall": 0.0,
        "fmean": 0.0,
        "penalty": 0.0,
        "score_unrounded": 0.0,
        "score": 0.0,
    }
    if not ref_tokens or not cand_tokens or m == 0:
        return result

    precision = m / len(cand_tokens)
    recall = m / len(ref_tokens)
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    penalty = gamma * (chunks / m) ** beta
    score = fmean * (1 - penalty)
    result.update(
        precision=precision,
        recall=recall,
        fmean=fmean,
        penalty=penalty,
        score_unrounded=score,
        score=round(score, DECIMALS),
    )
    return result


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5) -> float:
    """METEOR with exact unigram matching, rounded to 3 decimals."""
    return explain(reference, candidate, alpha, beta, gamma)["score"]
