"""Each integrity check carries its own facts, read by name through CHECKS: pinned to what the name
comparisons they replaced decided (memorization after evaluation; api_usage and judge unchecked in
a Harbor verifier; judge not measured by the self-test)."""

from __future__ import annotations

from ptbench.integrity.checks import CHECKS


def test_the_checks_facts() -> None:
    after = [n for n in CHECKS.names() if CHECKS.get(n).runs_after_evaluation]
    harbor = [n for n in CHECKS.names() if CHECKS.get(n).harbor_unchecked]
    unmeasured = [n for n in CHECKS.names() if CHECKS.get(n).selftest_unmeasured]
    assert (after, harbor, unmeasured) == (["memorization"], ["api_usage", "judge"], ["judge"])
