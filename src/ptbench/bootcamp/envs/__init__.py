"""The environments that ship with ptbench; importing this package registers them.

The simulator- and solver-backed ones import their packages (pybamm, pokerkit, ortools, statsmodels)
only when a case is generated, a tool runs or a reward is computed, so registering them stays cheap
and each needs only its own extra (`ptbench bootcamp list` names it). `pencil` is a package of puzzle
families that registers itself as an adapter (`pencil.<family>`); the adapters' loader imports this
package, so its families are listed with the adapted ones.
"""

from ptbench.bootcamp.envs import (  # noqa: F401  (importing a module registers its environments)
    addition,
    answers,
    arithmetic,
    battery,
    combinatorial,
    forecasting,
    mastermind,
    pencil,
    poker,
    robot_arm,
    sql_explore,
)
