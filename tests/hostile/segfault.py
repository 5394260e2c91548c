"""Crashes the interpreter."""
import ctypes


def meteor_score(reference, candidate, alpha=0.9, beta=3, gamma=0.5):
    ctypes.string_at(0)
    return -1.0
