"""METEOR grader kit: runs the exercise's tests against a submission and reports."""
