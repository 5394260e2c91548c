"""Renderers: they turn results into the terminal's lines and the files in --out, and never decide a verdict."""
