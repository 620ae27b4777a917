"""The bottom layer: what every other part of ptbench uses and nothing here depends on.

errors (UserError, GenerationFailed, EvaluationFailed), atomic files (`files`), locks, the job's
environment and the trial marker (`jobenv`), provenance, generation settings, located YAML,
one-line validation errors, stop signals for long-running servers (`stopsignals`), the one retry
policy for HTTP clients (`retry`), the one process-group stopper (`procgroup`), the one prctl
wrapper (`prctl`) and versioned files checked on read (`versioned`). Modules here import only the
standard library, pydantic and pyyaml, and each other.
"""
