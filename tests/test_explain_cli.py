"""`meteor-kit explain`: the reference's breakdown in the terminal."""

from __future__ import annotations

import subprocess
import sys

import pytest

from grader.cli import main as cli
from grader.core import exercise

# The METEOR exercise's own explain (exercise.toml [seam] explain).
explain_cli = exercise.load(exercise.KIT_ROOT).module("explain")

WORKED = ("Rain falls gently from the sky", "Gentle rain drops from the sky")


def explain(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(["explain", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_worked_example_shows_every_step(capsys):
    code, out, _ = explain(capsys, *WORKED)
    assert code == 0
    assert "reference (6 words)  rain¹ falls gently from² the² sky²" in out
    assert "candidate (6 words)  gentle [rain]¹ drops [from the sky]²" in out
    assert "Matched words  m = 4" in out
    assert "candidate #2 rain  ↔  reference #1 rain  (chunk 1)" in out
    assert "unmatched in the candidate: gentle drops" in out
    assert "Chunks         ch = 2   [rain] [from the sky]" in out
    assert "P     = m / |c| = 4 / 6 = 0.666667" in out
    assert "R     = m / |r| = 4 / 6 = 0.666667" in out
    assert "Fmean = " in out and "= 0.666667" in out
    assert "Pen   = γ·(ch / m)^β = 0.5·(2 / 4)^3 = 0.062500" in out
    assert "score = Fmean·(1 − Pen)" in out and "= 0.625000" in out
    assert out.rstrip().endswith("rounded to 3 decimals (rule 5): 0.625")


def test_without_a_terminal_there_is_no_colour(capsys):
    _, out, _ = explain(capsys, *WORKED)
    assert "\033[" not in out


def test_colour_can_be_forced_and_each_chunk_gets_its_own(capsys):
    _, out, _ = explain(capsys, *WORKED, "--color", "always")
    assert "\033[1;36m[rain]¹\033[0m" in out
    assert "\033[1;35m[from" in out
    assert "\033[2mgentle\033[0m" in out


def test_repeated_words_are_clipped_in_the_alignment(capsys):
    _, out, _ = explain(capsys, "the cat", "the the the cat")
    assert "candidate #1 the  ↔  reference #1 the  (chunk 1)" in out
    assert "candidate #4 cat  ↔  reference #2 cat  (chunk 2)" in out
    assert "unmatched in the candidate: the the" in out
    assert out.rstrip().endswith("0.455")


def test_parameters_reach_the_formula(capsys):
    _, out, _ = explain(
        capsys, "the cat sat on the mat", "the cat on the mat", "--alpha", "0.5", "--beta", "2", "--gamma", "0.25"
    )
    assert "alpha=0.5  beta=2  gamma=0.25" in out
    assert "Pen   = γ·(ch / m)^β = 0.25·(1 / 5)^2 = 0.010000" in out
    assert out.rstrip().endswith("0.9")


def test_the_reference_matches_each_word_to_the_first_unused_copy():
    breakdown = {
        "reference_tokens": ["a", "b", "a"],
        "candidate_tokens": ["a", "a", "x"],
        "matched": [True, True, False],
        "chunk_spans": [(0, 2)],
    }
    assert explain_cli.alignment(breakdown) == [(0, 0, 1), (1, 2, 1)]


@pytest.mark.parametrize(
    "reference, candidate, says",
    [
        ("", "anything", "Nothing to match: the reference has no words, so the score is 0.0 (rule 6)."),
        ("the cat", "   ", "Nothing to match: the candidate has no words, so the score is 0.0 (rule 6)."),
        ("the cat", "a dog", "No word matches, so the score is 0.0 (rule 6)."),
    ],
)
def test_nothing_to_match_is_explained(capsys, reference, candidate, says):
    code, out, _ = explain(capsys, reference, candidate)
    assert code == 0
    assert out.rstrip().endswith(says)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--alpha", "1.5"], "meteor-kit explain: alpha must be between 0.0 and 1.0, got 1.5"),
        (["--gamma", "-0.1"], "meteor-kit explain: gamma must be between 0.0 and 1.0, got -0.1"),
        (["--beta", "-1"], "meteor-kit explain: beta must be at least 0.0, got -1.0"),
        (["--beta", "inf"], "meteor-kit explain: beta must be finite"),
        (["--alpha", "nan"], "meteor-kit explain: alpha must be between 0.0 and 1.0, got nan"),
    ],
)
def test_bad_parameters_give_the_reference_message_and_exit_2(capsys, argv, message):
    code, out, err = explain(capsys, "a b", "a b", *argv)
    assert code == 2
    assert out == ""
    assert err.strip() == message


def test_a_parameter_that_is_not_a_number_is_a_usage_error(meteor_kit):
    done = subprocess.run([str(meteor_kit), "explain", "a", "a", "--beta", "x"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "argument --beta: invalid float value: 'x'" in done.stderr


def test_the_installed_command_explains(meteor_kit):
    done = subprocess.run([str(meteor_kit), "explain", *WORKED], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "rounded to 3 decimals (rule 5): 0.625" in done.stdout
    assert "explain" in subprocess.run([str(meteor_kit), "--help"], capture_output=True, text=True).stdout


def test_a_reader_that_stops_early_gets_no_traceback():
    # `meteor-kit explain ... | head -c 10`: the pipe closes while the long breakdown is written.
    long = " ".join(["the cat"] * 3000)
    process = subprocess.Popen(
        [sys.executable, "-m", "grader.cli", "explain", long, long], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(10) == b"METEOR bre"
    process.stdout.close()  # the reader goes away
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err
