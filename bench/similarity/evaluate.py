"""Pairs found by each tool against the planted ones: python3 evaluate.py CLASS.json TOOL1.json TOOL2.json ..."""

import itertools
import json
import sys

truth = json.load(open(sys.argv[1]))
for tool in sys.argv[2:]:
    pairs = json.load(open(tool))

    def key(a, b):
        return f"{min(a, b)}|{max(a, b)}"

    planted = [(p["kind"], pairs.get(key(p["a"], p["b"]), 0.0)) for p in truth["planted"]]
    indep = sorted((pairs.get(key(a, b), 0.0) for a, b in itertools.combinations(truth["independent"], 2)), reverse=True)
    print(tool, "planted:", " ".join(f"{k[:4]}={s:.2f}" for k, s in planted))
    print(
        "   independent pairs:",
        len(indep),
        "top5:",
        [round(x, 2) for x in indep[:5]],
        "planted above the top independent:",
        sum(s > indep[0] for _, s in planted),
        "/",
        len(planted),
    )
    for t in (0.5, 0.6, 0.7, 0.8, 0.9):
        print(f"   t={t}: planted found {sum(s >= t for _, s in planted)}/16, independent flagged {sum(x >= t for x in indep)}")
