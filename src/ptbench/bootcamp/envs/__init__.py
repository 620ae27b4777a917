"""The environments that ship with ptbench; importing this package registers them."""

from ptbench.bootcamp.envs import arithmetic, answers, mastermind, sql_explore  # noqa: F401
