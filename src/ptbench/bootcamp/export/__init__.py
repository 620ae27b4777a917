"""The bootcamp's hand-off to trainers: SFT examples and verl's files, and what runs inside the
trainer (verl's agent loop, tools and reward; TRL's GRPO recipe of the `reference-grpo` agent)."""
