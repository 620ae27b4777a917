"""Exports of a campaign for other runners (`harbor`: one Harbor task directory per base model and task)."""
