"""copydetect on every pair of a folder: PYTHON run_copydetect.py FOLDER OUT.json (PYTHON with copydetect installed)."""

import itertools
import json
import sys
import time
from pathlib import Path

t0 = time.monotonic()
from copydetect import CodeFingerprint, compare_files

folder = Path(sys.argv[1])
files = sorted(folder.glob("*.py"))
t1 = time.monotonic()
fps = {f.name: CodeFingerprint(str(f), 25, 1) for f in files}
pairs = {}
for a, b in itertools.combinations(sorted(fps), 2):
    overlap, (sa, sb), _ = compare_files(fps[a], fps[b])
    pairs[f"{a}|{b}"] = max(sa, sb)
t2 = time.monotonic()
json.dump(pairs, open(sys.argv[2], "w"))
print(f"copydetect: import {t1 - t0:.2f}s, {len(files)} files, fingerprint+compare {t2 - t1:.2f}s")
