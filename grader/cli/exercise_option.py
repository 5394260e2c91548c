"""--exercise DIR, which every command takes; `meteor-kit` reads it before it builds its parser (main.choose_exercise)."""

from __future__ import annotations

import argparse


def add_exercise_option(parser: argparse.ArgumentParser) -> None:
    """--exercise DIR on `parser`, for its help: main.choose_exercise has read it already, wherever it stands."""
    parser.add_argument(
        "--exercise",
        dest="exercise_dir",
        metavar="DIR",
        help="the exercise folder (problem/, solutions/, hidden_tests/), anywhere on disk; default: the kit's own",
    )
