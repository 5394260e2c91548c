"""The grader kit's engine: runs an exercise's tests against a submission and reports."""
