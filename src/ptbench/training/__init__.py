"""Training recipes shipped with the harness (the `reference` agent's fixed TRL SFT recipe)."""
