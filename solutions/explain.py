"""The METEOR exercise's `explain` (exercise.toml [seam] explain): the reference's breakdown of one score, for a terminal."""

from __future__ import annotations

import argparse

from grader.core import exercise

SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
CHUNK_COLORS = ("36", "35", "34", "33")  # cyan, magenta, blue, yellow: neighbouring chunks differ
DIM, BOLD = "2", "1"


HELP = "print the reference's score breakdown for one reference and candidate"
DESCRIPTION = (
    "Show how the score of CANDIDATE against REFERENCE is computed: the matched words, "
    "the chunks, P, R, Fmean, the penalty and the score."
)
DEFAULTS = exercise.holding(__file__).defaults


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reference", help="the reference sentence (quote it)")
    parser.add_argument("candidate", help="the candidate sentence (quote it)")
    parser.add_argument("--alpha", type=float, help=f"weight of precision in the F-mean, 0 to 1 (default {DEFAULTS['alpha']:g})")
    parser.add_argument(
        "--beta", type=float, help=f"exponent of the fragmentation penalty, at least 0 (default {DEFAULTS['beta']:g})"
    )
    parser.add_argument(
        "--gamma", type=float, help=f"weight of the fragmentation penalty, 0 to 1 (default {DEFAULTS['gamma']:g})"
    )


def run(args: argparse.Namespace, reference, color: bool) -> str:
    """The breakdown of the reference's answer for the command line's input; ValueError or TypeError for bad input."""
    params = {k: getattr(args, k) for k in DEFAULTS if getattr(args, k) is not None}
    breakdown = reference.explain(args.reference, args.candidate, **params)
    return render(breakdown, {**DEFAULTS, **params}, color)


def alignment(breakdown: dict) -> list[tuple[int, int, int]]:
    """(candidate index, reference index, chunk number) for every match; each takes the first unused copy."""
    ref = breakdown["reference_tokens"]
    used = [False] * len(ref)
    chunk_of = {i: n for n, (start, end) in enumerate(breakdown["chunk_spans"], 1) for i in range(start, end)}
    links = []
    for i, word in enumerate(breakdown["candidate_tokens"]):
        if breakdown["matched"][i]:
            j = next(j for j, r in enumerate(ref) if r == word and not used[j])
            used[j] = True
            links.append((i, j, chunk_of[i]))
    return links


def _words(n: int) -> str:
    return f"{n} word" if n == 1 else f"{n} words"


def _paint(text: str, code: str, color: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if color else text


def _number(value: float) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:g}"


def _sentence(tokens: list[str], chunk_at: dict[int, int], color: bool, brackets: bool) -> str:
    """Matched words carry their chunk's number; the candidate's chunks are also bracketed."""
    words = []
    for i, token in enumerate(tokens):
        chunk = chunk_at.get(i)
        if chunk is None:
            words.append(_paint(token, DIM, color))
            continue
        text, last = token, chunk_at.get(i + 1) != chunk
        if brackets and chunk_at.get(i - 1) != chunk:
            text = "[" + text
        if brackets and last:
            text += "]"
        if last or not brackets:
            text += str(chunk).translate(SUPERSCRIPT)
        words.append(_paint(text, f"{BOLD};{CHUNK_COLORS[(chunk - 1) % 4]}", color))
    return " ".join(words) if words else _paint("(no words)", DIM, color)


def render(b: dict, params: dict, color: bool = False) -> str:
    alpha, beta, gamma = params["alpha"], params["beta"], params["gamma"]
    ref, cand = b["reference_tokens"], b["candidate_tokens"]
    links = alignment(b)
    head = _paint("METEOR breakdown", BOLD, color)
    lines = [f"{head}   alpha={alpha:g}  beta={beta:g}  gamma={gamma:g}", ""]

    ref_label, cand_label = f"reference ({_words(len(ref))})", f"candidate ({_words(len(cand))})"
    width = max(len(ref_label), len(cand_label))
    lines.append(f"  {ref_label:<{width}}  {_sentence(ref, {j: n for _, j, n in links}, color, False)}")
    lines.append(f"  {cand_label:<{width}}  {_sentence(cand, {i: n for i, _, n in links}, color, True)}")
    lines.append(
        _paint("  Chunks are [bracketed] in the candidate; each matched reference word carries its chunk's number.", DIM, color)
    )
    lines.append("")

    if not ref or not cand:
        which = "the reference" if not ref else "the candidate"
        lines.append(f"Nothing to match: {which} has no words, so the score is 0.0 (rule 6).")
        return "\n".join(lines)

    lines.append(f"Matched words  m = {b['m']}   (rule 2: left to right, each reference word used at most once)")
    lefts = [f"candidate #{i + 1} {cand[i]}" for i, _, _ in links]
    rights = [f"reference #{j + 1} {ref[j]}" for _, j, _ in links]
    left_width, right_width = max(map(len, lefts), default=0), max(map(len, rights), default=0)
    for left, right, (_, _, n) in zip(lefts, rights, links):
        lines.append(f"    {left:<{left_width}}  ↔  {right:<{right_width}}  (chunk {n})")
    unmatched = [w for w, hit in zip(cand, b["matched"]) if not hit]
    if unmatched:
        lines.append(_paint(f"    unmatched in the candidate: {' '.join(unmatched)}", DIM, color))
    if b["m"] == 0:
        lines.append("")
        lines.append("No word matches, so the score is 0.0 (rule 6).")
        return "\n".join(lines)

    chunk_texts = ["[" + " ".join(cand[s:e]) + "]" for s, e in b["chunk_spans"]]
    lines.append(
        f"Chunks         ch = {b['chunks']}   {' '.join(chunk_texts)}   (rule 4: runs of consecutive matched words in the candidate)"
    )
    lines.append("")
    m, ch = b["m"], b["chunks"]
    rows = [
        ("P", f"m / |c| = {m} / {len(cand)}", b["precision"]),
        ("R", f"m / |r| = {m} / {len(ref)}", b["recall"]),
        (
            "Fmean",
            f"P·R / (α·P + (1 − α)·R) = {_number(b['precision'])}·{_number(b['recall'])} / "
            f"({alpha:g}·{_number(b['precision'])} + {_number(1 - alpha)}·{_number(b['recall'])})",
            b["fmean"],
        ),
        ("Pen", f"γ·(ch / m)^β = {gamma:g}·({ch} / {m})^{beta:g}", b["penalty"]),
        ("score", f"Fmean·(1 − Pen) = {_number(b['fmean'])}·(1 − {_number(b['penalty'])})", b["score_unrounded"]),
    ]
    for name, formula, value in rows:
        lines.append(f"  {name:<6}= {formula} = {value:.6f}")
    final = _paint(f"{b['score']:g}", f"{BOLD};32", color)
    lines.append(f"  rounded to 3 decimals (rule 5): {final}")
    return "\n".join(lines)
