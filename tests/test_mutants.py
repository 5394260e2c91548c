"""bench/mutants.py: the benchmark's classes where every submission is a different single-point mutant."""

from __future__ import annotations

import ast
import importlib.util
import sys

from conftest import KIT_ROOT

# Registered before it runs: its dataclasses look their module up in sys.modules.
_spec = importlib.util.spec_from_file_location("bench_mutants", KIT_ROOT / "bench" / "mutants.py")
mutants = sys.modules.setdefault("bench_mutants", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(mutants)


def test_every_mutant_compiles_differs_from_the_others_and_from_its_original():
    originals = {p.name: ast.unparse(ast.parse(p.read_text())) for p in mutants.correct_solutions()}
    found = mutants.mutants(mutants.correct_solutions())
    assert len(found) >= 500  # enough for the class of 500
    sources = [m.source for m in found]
    assert len(set(sources)) == len(sources)
    for mutant in found:
        compile(mutant.source, mutant.origin, "exec")
        assert mutant.source.strip() != originals[mutant.origin]
    # Each kind of change the generator claims is among them.
    kinds = {m.what.split(": ", 1)[1] for m in found}
    for expected in ("Lt -> LtE", "Add -> Sub", "statement deleted", "and <-> or", "len -> sum", "round dropped"):
        assert any(k.startswith(expected) for k in kinds), expected
    assert any("first two arguments swapped" in k for k in kinds)


def test_the_same_seed_writes_the_same_class_and_another_seed_another(tmp_path):
    folders = {}
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        folders[name] = tmp_path / name
        folders[name].mkdir()
        assert mutants.diverse_class(folders[name], 40, seed) == 40

    def texts(folder):
        return [p.read_text() for p in sorted(folder.iterdir())]

    assert texts(folders["a"]) == texts(folders["b"])
    assert texts(folders["a"]) != texts(folders["c"])


def test_the_copies_class_holds_three_copies_of_43_solutions_each_text_different(tmp_path):
    assert mutants.copies_class(tmp_path) == 129
    files = sorted(tmp_path.iterdir())
    assert len({p.read_text() for p in files}) == 129
    assert len({p.name.rsplit("_", 1)[0] for p in files}) == 43


def test_asking_for_more_mutants_than_there_are_writes_them_all_and_says_so(tmp_path, monkeypatch, capsys):
    there_are = len(mutants.mutants(mutants.correct_solutions()))
    monkeypatch.setattr(sys, "argv", ["mutants.py", str(tmp_path / "class"), "--count", str(there_are + 1000)])
    assert mutants.main() == 0
    assert len(list((tmp_path / "class").iterdir())) == there_are
    err = capsys.readouterr().err
    assert f"asked for more; {there_are} are all the distinct mutants there are" in err
