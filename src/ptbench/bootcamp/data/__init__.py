"""The bootcamp's data generation: generators' cases as verl's RL rows and as SFT examples,
deterministic, sharded and resumable; suites that mix several bootcamps."""
