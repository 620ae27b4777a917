"""Result records, the collator, and tables for papers."""

from ptbench.results.schema import SCHEMA_VERSION, ResultRecord

__all__ = ["SCHEMA_VERSION", "ResultRecord"]
