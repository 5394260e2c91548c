"""A made-up class for the similarity tools: python3 make_class.py FOLDER SIZE (writes FOLDER.json, the truth).

The catalogue's 54 solutions as 54 students (its 45 wrong ones are variants of one another;
the 8 correct ones and the reference were written separately: those 9 are "independent"),
16 planted copies of some of them (exact, names changed, reformatted, both), and, past 70
files, padding: renamed copies of random solutions (for timing only).
"""

import ast
import json
import random
import re
import shutil
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parents[2]
out = Path(sys.argv[1])
size = int(sys.argv[2])
shutil.rmtree(out, ignore_errors=True)
out.mkdir(parents=True)
sources = (
    sorted((KIT / "tests/catalogue/correct").glob("*.py"))
    + sorted((KIT / "tests/catalogue/wrong").glob("*.py"))
    + [KIT / "solutions/reference.py"]
)
rng = random.Random(1)
WORDS = ["foo", "tmp", "val", "xs", "lst", "thing", "cnt", "acc", "data", "res", "aa", "bb", "w1", "w2", "store", "item"]


def rename(src):
    tree = ast.parse(src)
    params = {a.arg for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) for a in n.args.args}
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} - params - {"MISTAKE"}
    mapping = {name: f"{rng.choice(WORDS)}_{i}" for i, name in enumerate(sorted(stored))}
    return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: mapping.get(m.group(), m.group()), src)


def reformat(src):
    code = ast.unparse(ast.parse(src))  # comments gone, spacing normalised, quotes changed
    lines = code.splitlines()
    outl = []
    for line in lines:
        outl.append(line)
        if rng.random() < 0.25:
            outl.append(
                " " * (len(line) - len(line.lstrip()))
                + "# "
                + rng.choice(["step", "compute it", "TODO check", "as in the notes"])
            )
        if rng.random() < 0.2:
            outl.append("")
    return "\n".join(outl) + "\n"


names = {}
for i, path in enumerate(sources):
    name = f"auth_{i:02d}.py"
    (out / name).write_text(path.read_text())
    names[name] = path.name
planted = []
picks = rng.sample(range(len(sources)), 16)
kinds = ["exact"] * 4 + ["renamed"] * 4 + ["reformatted"] * 4 + ["renamed+reformatted"] * 4
for j, (k, kind) in enumerate(zip(picks, kinds)):
    src = sources[k].read_text()
    if "renamed" in kind:
        src = rename(src)
    if "reformatted" in kind:
        src = reformat(src)
    name = f"copy_{j:02d}.py"
    (out / name).write_text(src)
    planted.append({"a": f"auth_{k:02d}.py", "b": name, "kind": kind})
n = len(sources) + 16
while n < size:
    src = rename(rng.choice(sources).read_text())
    (out / f"pad_{n:03d}.py").write_text(src)
    n += 1
n_correct = len(sorted((KIT / "tests/catalogue/correct").glob("*.py")))
independent = [f"auth_{i:02d}.py" for i in range(n_correct)] + [f"auth_{len(sources) - 1:02d}.py"]
json.dump({"planted": planted, "independent": independent}, open(str(out) + ".json", "w"), indent=1)
print(len(list(out.iterdir())), "files")
