"""The memorization check: final_model/ against sibling items it could not have seen (check.py)."""
