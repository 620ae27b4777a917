"""The integrity self-test: the project's own scripted attacks against every check, with honest
controls, through the real checks; a recall and false-positive table per check and benchmark
(`ptbench selftest integrity`). The scenarios are in scenarios.py, the run and the table in run.py,
the last recorded table in recorded.json."""

from ptbench.integrity.selftest.run import (
    RECORDED,
    Cell,
    Outcome,
    cells,
    record,
    recorded,
    regressions,
    render,
    report,
    run,
)
from ptbench.integrity.selftest.run import scenarios as select
from ptbench.integrity.selftest.scenarios import ANY, CHECKS, Plant, Scenario, library

__all__ = [
    "ANY",
    "RECORDED",
    "CHECKS",
    "Cell",
    "Outcome",
    "Plant",
    "Scenario",
    "cells",
    "library",
    "record",
    "recorded",
    "regressions",
    "render",
    "report",
    "run",
    "select",
]
