"""Moved to ptbench.testing.gsm8k_rows (the integrity self-test generates its GSM8K test set with it);
this name stays for scripts/bench_memorization_gsm8k.py, which imports it from here."""

from ptbench.testing.gsm8k_rows import NAMES, SOLVE, THINGS, rows, solve, write

__all__ = ["NAMES", "SOLVE", "THINGS", "rows", "solve", "write"]
