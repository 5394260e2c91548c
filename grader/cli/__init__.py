"""The command line: argument parsing, and one function per command that calls judging and reports."""
