"""Identical and near-identical submissions, found with copydetect (winnowing) on the code as graded.

It reads the code recorded in the results; it never runs it. copydetect tokenizes each file
(names become V and F, strings S, comments go), fingerprints its 25-character k-grams, and
measures which share of each file's tokens another file covers. The starter's code is
boilerplate: what every student was given is never evidence. Why copydetect, and how well
it finds planted copies: docs/similarity.md.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import multiprocessing
import os
import re
import signal
import sys
import tokenize
import types
from collections.abc import Callable
from typing import Any

from grader.core import exercise
from grader.core.results import SimilarPair, SubmissionResult, SubmissionStatus
from grader.judging import lexing

K = 25  # characters of tokenized code in a k-gram: copydetect's default noise threshold
WINDOW = 1  # keep every k-gram: the files are short, and recall matters more than speed here
THRESHOLD = 0.75  # flagged when a file shares this much of its tokens with another
# A pair is compared in full only when one file holds this share of the other's fingerprints:
# planted copies held 0.71 or more, independent solutions at most 0.28 (docs/similarity.md).
CANDIDATE = 0.5
# candidates: classes of up to this many distinct files are counted in one n-by-n array (about
# 150 MB at most, with its indices), larger ones pair by pair; and the pairs one step counts.
COUNTED_AT_ONCE = 2048
PAIRS_AT_ONCE = 1 << 22
MAX_PAIRS = 2000  # kept in results.json: a class that shares one file makes pairs by the thousand


def normal(source: str) -> str:
    """The code's tokens without comments or layout: two files equal here are 'identical'."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        return "\0".join(t.string for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL))
    except (tokenize.TokenError, SyntaxError):
        return source


def code_digest(source: str) -> bytes:
    """A digest of the code without comments or layout: equal for files that are 'identical'."""
    return hashlib.sha256(normal(source).encode("utf-8", "replace")).digest()


def fingerprint_class() -> type:
    """copydetect's CodeFingerprint, imported without matplotlib.

    `import copydetect` loads matplotlib.pyplot for its HTML report, which the kit never makes:
    0.36 s of a core, 0.12 s without it (measured), taken while the workers grade on the same
    cores. Unless matplotlib is loaded already, placeholders stand in for it during the import
    and are gone after it, so a later `import matplotlib` gets the real one.
    """
    if "copydetect" in sys.modules or "matplotlib" in sys.modules:
        from copydetect import CodeFingerprint

        return CodeFingerprint
    stand_ins = {"matplotlib": types.ModuleType("matplotlib"), "matplotlib.pyplot": types.ModuleType("matplotlib.pyplot")}
    stand_ins["matplotlib"].pyplot = stand_ins["matplotlib.pyplot"]  # type: ignore[attr-defined]
    sys.modules.update(stand_ins)
    try:
        from copydetect import CodeFingerprint
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    return CodeFingerprint


def fingerprint_of(CodeFingerprint: type, name: str, source: str, boilerplate: Any = None) -> Any:
    """copydetect's fingerprint of the code, its text filtered as copydetect filters it (lexing.filtered, 5x faster)."""
    try:
        text = lexing.filtered(source)
    except Exception:  # what the joined rules could not lex, copydetect's own filter does
        return CodeFingerprint(name, K, WINDOW, boilerplate=boilerplate, language="python", fp=io.StringIO(source))
    return CodeFingerprint(name, K, WINDOW, boilerplate=boilerplate, filter=False, fp=io.StringIO(text))


def similar_pairs(results: list[dict], starter: str) -> list[dict]:
    """Pairs of submissions whose code overlaps, most overlap first: {"a", "b", "overlap", "identical"}.

    `starter`: the code every student was given (the exercise's problem/starter.py), which overlaps nothing.
    """
    import numpy as np

    CodeFingerprint = fingerprint_class()
    starter = fingerprint_of(CodeFingerprint, "starter.py", starter)
    boilerplate = np.array(sorted(starter.hashes), dtype=np.int64)
    # Files with the same tokenized code (a copy with names changed, comments or layout too)
    # overlap fully: they form one group, and copydetect compares one file of each group.
    groups: dict[str, list[tuple[str, bytes]]] = {}
    where: dict[str, Positions] = {}  # each group's fingerprint, as compared
    # Files with the same code but for comments and layout (copies, or one file with a student's
    # header) have the same fingerprint, which copydetect's lexer takes most of the time to make:
    # made once for each (a class of 500 with 20 distinct files: 2.3 s, then 0.76 s).
    made: dict[bytes, CodeFingerprint | None] = {}
    for r in results:
        source = r.get("source")
        if not source or r.get("status") == "not_graded":
            continue
        name = str(r["submission"])
        digest = code_digest(source)
        if digest not in made:
            try:
                made[digest] = fingerprint_of(CodeFingerprint, name, source, boilerplate)
            except Exception:
                made[digest] = None
        fingerprint = made[digest]
        if fingerprint is None or not fingerprint.hashes:  # nothing beyond the starter: nothing to compare
            continue
        members = groups.setdefault(fingerprint.filtered_code, [])
        if not members:
            where[fingerprint.filtered_code] = Positions(fingerprint)
        members.append((name, digest))
    pairs = []
    for members in groups.values():
        for (a, digest_a), (b, digest_b) in itertools.combinations(members, 2):
            pairs.append(_pair(a, b, 1.0, digest_a == digest_b))
    keys = list(groups)
    for i, j in candidates([where[key] for key in keys]):
        one, other = keys[i], keys[j]
        first, second = where[one], where[other]
        overlap = float(max(first.share(second), second.share(first)))
        if overlap >= THRESHOLD:
            pairs += [_pair(a, b, overlap, False) for a, _ in groups[one] for b, _ in groups[other]]
    pairs.sort(key=lambda p: (-p["overlap"], p["a"], p["b"]))
    return pairs


def candidates(prints: list[Positions]) -> list[tuple[int, int]]:
    """The pairs (i, j), i < j, of `prints` sharing at least CANDIDATE of the smaller one's hashes.

    Counted for all pairs at once from which fingerprints hold each hash: a hash held by d of
    them adds one to each of their d(d-1)/2 pairs, in NumPy. A set intersection per pair took
    0.36 s of CPU for the 44,850 pairs of the diverse class of 300 files and 1.95 s for a class
    of 682 mutants; this takes 0.04 s and 0.20 s (the same pairs: tests/test_similarity.py).
    """
    import numpy as np

    n = len(prints)
    if n < 2:
        return []
    if n > COUNTED_AT_ONCE:
        return [
            (i, j)
            for i, j in itertools.combinations(range(n), 2)
            if len(prints[i].hashes & prints[j].hashes) >= CANDIDATE * min(len(prints[i].hashes), len(prints[j].hashes))
        ]
    sizes = np.array([len(p.sorted_hashes) for p in prints], dtype=np.int64)
    hashes = np.concatenate([p.sorted_hashes for p in prints])
    owners = np.repeat(np.arange(n, dtype=np.int64), sizes)
    order = np.argsort(hashes, kind="stable")  # a hash's holders stay in ascending order
    hashes, owners = hashes[order], owners[order]
    firsts = np.flatnonzero(np.concatenate(([True], hashes[1:] != hashes[:-1])))
    held = np.diff(np.append(firsts, len(hashes)))  # how many fingerprints hold each hash
    shared = np.zeros(n * n, dtype=np.int64)  # shared[i * n + j], i < j: hashes i and j both hold
    for d in np.unique(held[held > 1]):
        rows = firsts[held == d]
        first, second = np.triu_indices(int(d), 1)  # every pair of d holders
        step = max(1, PAIRS_AT_ONCE // len(first))
        for at in range(0, len(rows), step):
            holders = owners[rows[at : at + step, None] + np.arange(d)]  # one row per hash
            shared += np.bincount((holders[:, first] * n + holders[:, second]).ravel(), minlength=n * n)
    shared = shared.reshape(n, n)
    i, j = np.triu_indices(n, 1)
    enough = shared[i, j] >= CANDIDATE * np.minimum(sizes[i], sizes[j])
    return list(zip(i[enough].tolist(), j[enough].tolist()))


class Positions:
    """Where a copydetect fingerprint's k-grams start, by hash: what copydetect's `compare_files` measures, made once per file.

    `share(other)` is the first of the two shares `compare_files` returns, the same float: the
    tokens of this file that k-grams the other file holds cover, over the tokens its own k-grams
    cover. `compare_files` also finds the copied slices in the raw text, which the class report
    does not show, one small NumPy array per shared k-gram: in the diverse class of 300 files,
    whose 5,600 candidate pairs are mutants of the same styles, the check took 3.75 s of CPU with
    it and 3.1 s without. The shared k-grams' starts are then found with one sorted search in
    NumPy rather than a Python loop over them: 3.5 s became 2.4 s (measured in one run, the same
    pairs), and 2.07 s with the candidates counted at once (`candidates`); copydetect's lexing is
    1.0 s of it.
    """

    def __init__(self, fingerprint: Any) -> None:
        import numpy as np

        by_start = sorted((int(i), int(h)) for h, starts in fingerprint.hash_idx.items() for i in starts)
        self.starts = np.array([i for i, _ in by_start], dtype=np.int64)  # every k-gram's start, in order
        self.hash_at = np.array([h for _, h in by_start], dtype=np.int64)  # ... and its hash
        self.hashes = set(fingerprint.hash_idx)  # the fingerprint's own `hashes`
        self.sorted_hashes = np.array(sorted(self.hashes), dtype=np.int64)
        self.k = fingerprint.k
        self.coverage = fingerprint.token_coverage
        self.empty = len(fingerprint.filtered_code) == 0

    def share(self, other: Positions) -> float:
        import numpy as np

        if self.empty:
            return 0
        # The starts of this file's k-grams that the other file holds too, in order.
        theirs = other.sorted_hashes
        if not theirs.size:
            return 0
        found = np.minimum(np.searchsorted(theirs, self.hash_at), len(theirs) - 1)
        starts = self.starts[theirs[found] == self.hash_at]
        if not starts.size:
            return 0
        # The union of [start, start + k) over them (copydetect's copied slices, summed).
        k = self.k
        return (k + int(np.minimum(np.diff(starts), k).sum())) / self.coverage


def _pair(a: str, b: str, overlap: float, identical: bool) -> dict:
    a, b = sorted((a, b))
    return {"a": a, "b": b, "overlap": round(overlap, 3), "identical": identical}


class InBackground:
    """similar_pairs of `entries` ({"submission", "source"}), made by a process of its own while the class is graded.

    It runs at SCHED_IDLE, so it yields to the grader's own processes. With autogroups on, it
    still competes with the submissions' sessions as our session does (alone in a group at nice
    19, the grading ended sooner but the check 2 s after it: no gain, docs/performance.md). In
    the diverse class of 300 files the check took 4.4 s after the grading; it now goes on during it.
    """

    def __init__(self, entries: list[dict], starter: str) -> None:
        self.entries = entries
        context = multiprocessing.get_context("fork")
        self._answer, send = context.Pipe(duplex=False)
        self._process = context.Process(target=_in_background, args=(send, entries, starter), daemon=True)
        self._process.start()
        send.close()

    def ready(self) -> bool:
        return self._answer.poll()

    def pairs(self) -> list[dict] | None:
        """The pairs, once made (None if it failed: the caller makes them itself)."""
        try:
            ok, value = self._answer.recv()
        except (EOFError, OSError):
            return None
        finally:
            self.stop()
        return value if ok else None

    def stop(self) -> None:
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._answer.close()


def _in_background(answer, entries: list[dict], starter: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl+C stops the grading; the grader says what happens to this
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (OSError, AttributeError):
        pass
    try:
        answer.send((True, similar_pairs(entries, starter)))
    except Exception as exc:  # copydetect missing, or failing: the grader tries again itself, and says why
        answer.send((False, repr(exc)))


# ---------------------------------------------------------------- the class's code, for grade_class


# The order of grading needs only a rough "same code": comments and layout dropped by patterns,
# strings read as code (0.02 s for 500 files, where tokenizing them as `normal` does took 0.19 s,
# all of it before the first file is handed out). Both found the same kinds in the bench's classes.
COMMENT, SPACE_IN_WORDS, SPACE = re.compile(r"#[^\n]*"), re.compile(r"(?<=\w)\s+(?=\w)"), re.compile(r"\s+")
LOOP = re.compile(r"\bwhile\b")


def first_of_each_kind(todo: list[int], sources: list[str | None]) -> list[int]:
    """`todo` with one file of each distinct code first (the same code but for comments and layout), then the copies.

    What the memo cannot answer comes first: it learns each kind early, and a file that hangs,
    which takes its whole budget, starts early too instead of keeping the class waiting at its
    end. In a class of 500 with 20 distinct files, the last hanging one started 10.3 s into a
    run whose other files were graded in 11.5 s, and the run ended at 15.3 s. Of those first,
    files with a `while` loop go first: a call hangs in one far more often than elsewhere (all 10
    hanging files of the diverse class of 300, among its 56 with one). Results keep the class's
    order; only the order of grading changes, and no verdict depends on it.
    """
    seen: set[str] = set()
    loops, first, copies = [], [], []
    for index in todo:
        code = SPACE.sub("", SPACE_IN_WORDS.sub("\0", COMMENT.sub("", sources[index] or "")))
        if code in seen:
            copies.append(index)
        else:
            (loops if LOOP.search(code) else first).append(index)
        seen.add(code)
    return loops + first + copies


def class_pairs(
    results: list[SubmissionResult],
    ex: exercise.Exercise,
    tell: Callable[[str], None],
    early: InBackground | None = None,
) -> tuple[list[SimilarPair] | None, str]:
    """Pairs of submissions with identical or near-identical code, beyond `ex`'s starter (None: the check could not run).

    `early`: the check begun while the class was graded, on the code as read before; used if the
    code graded is that code (a file changed since is checked again here).
    """
    usable = early is not None and [e["source"] for e in early.entries] == [r.source for r in results]
    if early is not None and not usable:
        early.stop()
    if not (usable and early is not None and early.ready()):
        tell(f"checking {len(results)} submission(s) for similar code...")
    pairs = early.pairs() if usable and early is not None else None
    if pairs is None:
        entries = [{"submission": r.submission, "source": r.source, "status": r.status} for r in results]
        try:
            pairs = similar_pairs(entries, ex.starter)
        except ImportError as exc:  # copydetect or numpy missing: the grades stand, the check is said undone
            tell(f"warning: similar code not checked ({exc})")
            return None, f"not checked: {exc}"
    else:
        # Those not graded (a Ctrl+C) are left out, as similar_pairs leaves them out.
        left_out = {r.submission for r in results if r.status == SubmissionStatus.NOT_GRADED}
        pairs = [p for p in pairs if p["a"] not in left_out and p["b"] not in left_out]
    found = [SimilarPair.from_json(p) for p in pairs]
    if len(found) > MAX_PAIRS:
        return found[:MAX_PAIRS], f"{len(found)} pairs in all; the {MAX_PAIRS} with the most overlap are listed."
    return found, ""
