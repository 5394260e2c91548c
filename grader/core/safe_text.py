"""Text from a submission made safe for each place it is written: JSON, a terminal, a spreadsheet.

Anything a submission controls (its answers, what it prints, its file's name, a notebook's
JSON) can hold lone surrogates, which no UTF-8 file can store, and control characters, which
a terminal obeys. One such string must never stop the class's outputs from being written.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

_SURROGATES = re.compile("[\ud800-\udfff]")
# C0 controls except newline and tab, DEL, C1 controls, and the bidirectional overrides that
# make text read differently from what it is ("Trojan Source").
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROLS_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# What a spreadsheet reads as a formula, or as the start of one once it trims the cell.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e"}
# Bytes of a file or folder name made from a student's name. File systems hold 255 bytes a name,
# not 255 characters (85 CJK characters, 63 of the rarest): this leaves room for a suffix
# (`-12`, `.html`) and for a staging file's prefix.
NAME_BYTES = 120
_DIGEST = 10  # hex digits of the digest that keeps two names cut alike apart


def valid(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, so that it encodes as UTF-8."""
    return _SURROGATES.sub("\ufffd", text)


def clean(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, strings, numbers) with every string, keys too, `valid`.

    What holds no surrogate is returned as it is, not copied. A class of 500 results is about
    360,000 strings, nearly all ASCII, which `isascii` settles in C: this walk took 0.2 s for
    one, where serialising it to look for surrogates took 0.7 s (measured on a busy machine).
    """
    kind = type(value)
    if kind is str:
        return value if value.isascii() or not _SURROGATES.search(value) else valid(value)
    if kind is dict:
        return {clean(k): clean(v) for k, v in value.items()} if _dirty(value) else value
    if kind is list or kind is tuple:
        return [clean(v) for v in value] if _dirty(value) else value
    return value


def _dirty(value: Any) -> bool:
    """Whether `clean` would change `value` (strings are checked inline: a call each was the cost)."""
    kind = type(value)
    if kind is str:
        return not value.isascii() and _SURROGATES.search(value) is not None
    if kind is dict:
        for key, item in value.items():
            if (type(key) is not str or not key.isascii()) and _dirty(key):
                return True
            kind = type(item)
            if kind is str:
                if not item.isascii() and _SURROGATES.search(item):
                    return True
            elif (kind is dict or kind is list or kind is tuple) and _dirty(item):
                return True
        return False
    if kind is list or kind is tuple:
        for item in value:
            kind = type(item)
            if kind is str:
                if not item.isascii() and _SURROGATES.search(item):
                    return True
            elif (kind is dict or kind is list or kind is tuple) and _dirty(item):
                return True
        return False
    return False


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def for_terminal(text: str, one_line: bool = False) -> str:
    """`text` as a terminal should show it: control characters written out (`\\e[2J`), never obeyed.

    Newlines and tabs stay unless `one_line` (names, one-line messages).
    """
    pattern = _CONTROLS_ONE_LINE if one_line else _CONTROLS
    return pattern.sub(_visible, valid(str(text)))


def for_csv(text: str) -> str:
    """A spreadsheet cell that is never read as a formula (OWASP's advice: prefix a quote).

    Control characters are written out too: a CSV file is often read with `cat`.
    """
    text = for_terminal(text, one_line=True)
    return "'" + text if text.startswith(_FORMULA_START) else text


def path_text(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 written as `\\xff` (distinct names stay distinct)."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def safe_name(name: str, limit: int = NAME_BYTES) -> str:
    """A submission's name as one file or folder name, at most `limit` bytes of UTF-8 (names come from student files).

    A name cut short ends with a digest of the whole name, so two long names that begin alike
    stay two names.
    """
    cleaned = re.sub(r"[^\w.@+-]", "_", name).lstrip(".") or "_"
    if len(cleaned.encode()) <= limit:
        return cleaned
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST]
    head = cleaned.encode()[: limit - _DIGEST - 1].decode("utf-8", "ignore")
    return f"{head}-{digest}"


def unique_name(base: str, used: set[str]) -> str:
    """`base`, or `base-2`, `base-3`...: a name not in `used` even ignoring case (macOS, Windows), then added to it."""
    name, n = base, 1
    while name.casefold() in used:
        n += 1
        name = f"{base}-{n}"
    used.add(name.casefold())
    return name
