"""Judging a class on the trusted side: discovery, the worker pool, the memo, diagnosis, resume and shards."""
