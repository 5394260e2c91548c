"""Every tuning constant of the kit's acceleration, each with why it has its value (figures: docs/performance.md).

None of them changes a verdict: each trades speed against memory, or waiting against work.
The jail's own limits (grader/sandbox/timing.py) and an exercise's (exercise.toml) are not
acceleration and live with what they limit.
"""

from __future__ import annotations

# ---------------------------------------------------------------- the worker pool (grader/judging/grade.py)

# A worker past what its submission may take (POOL_LONGEST budgets: its run, the memo's check, a full run) plus GRACE s is killed.
POOL_LONGEST, GRACE = 4, 60.0
# Seconds the parent waits for a worker's message before it looks for overdue workers again.
POOL_POLL = 1.0
# Workers a core of --jobs, at most: a call that sleeps (time.sleep, a lock, input) is judged by
# its own time, up to 3 s, and holds its worker while its core stands idle; another worker takes the
# core meanwhile. Each takes up to WORKER_MEMORY with its jail (about 100 MB measured).
WORKERS_PER_JOB, WORKER_MEMORY = 2, 160 * 2**20
# The workers beyond --jobs grade only while the cores stand idle: one more while more than IDLE_MORE
# of their time over IDLE_WINDOW s was idle, one fewer under IDLE_FEWER. Where the cores are busy
# anyway (a class of new behaviours) more workers only learn more of each other's traces.
IDLE_WINDOW, IDLE_MORE, IDLE_FEWER = 0.5, 0.15, 0.05

# ---------------------------------------------------------------- the memo (grader/judging/memoized/)

# Calls a memo remembers at most (a few hundred bytes each): a class of odd submissions cannot grow a worker without bound.
MAX_NODES = 300_000
# Seconds a walk waits for the rest of a batch it no longer needs before a fresh child is cheaper.
SETTLE = 0.05
# Calls a real run sends at most in one batch ahead of the test, from a remembered run with the same calls so far.
AHEAD = 256
# The memo's check may take CHECK_FACTOR times what the submission used, plus CHECK_SLACK s: asking again costs what asking did.
CHECK_FACTOR, CHECK_SLACK = 2.0, 1.0

# ---------------------------------------------------------------- property replay (grader/core/replay.py)

# The smallest-drawn pool: inputs at most SIMPLEST_STEPS steps up from the simplest and SIMPLEST_LONGER choices
# longer, SIMPLEST_RUNS tried per test: the very example hypothesis shrinks to in 97 % of failing tests.
SIMPLEST_STEPS, SIMPLEST_LONGER, SIMPLEST_RUNS = 4, 16, 2000
# Simpler choices tried at most when a drawn example less simple than the whole pool is simplified.
SIMPLIFY_TRIES = 300
# Strategy reprs kept by their make-up (hypothesis_adapter.shown): a few hundred make-ups per exercise.
SHOWN_KEPT = 4096

# ---------------------------------------------------------------- the direct calls (grader/judging/partial_run.py)

# pytest plugins a class's runs do without: nobody reads their output (each costs its hooks on every test).
PYTEST_OFF = ("faulthandler", "pastebin", "junitxml", "doctest", "stepwise", "legacypath", "setuponly", "setupplan", "logging")
