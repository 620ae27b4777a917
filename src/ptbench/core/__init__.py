"""The bottom layer: what every other part of ptbench uses and nothing here depends on.

errors (UserError, GenerationFailed, EvaluationFailed), atomic files (`files`), locks, the job's
environment and the trial marker (`jobenv`), provenance, generation settings, located YAML,
one-line validation errors, and stop signals for long-running servers (`stopsignals`). Modules
here import only the standard library, pydantic and pyyaml, and each other.
"""
