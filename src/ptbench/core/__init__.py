"""The bottom layer: what every other part of ptbench uses and nothing here depends on.

errors (UserError, GenerationFailed, EvaluationFailed), atomic files (`files`), locks, the job's
environment and the trial marker (`jobenv`), provenance, generation settings, located YAML and
one-line validation errors. Modules here import only the standard library, pydantic and pyyaml,
and each other.
"""
