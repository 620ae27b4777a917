"""InternBootcamp's bootcamp protocol, for users who install InternBootcamp (it is not on PyPI).

A bootcamp there is a class with `case_generator()` (an instance method that draws a case from the
global `random`), `prompt_func(case)`, `extract_output(text)` and `_verify_correction(solution,
case)` (True/False or a score). Any class that follows it runs here:

    levels:
      - {name: default, generator: internbootcamp,
         params: {bootcamp: "internbootcamp.bootcamp.game24.game_default:Game24bootcamp", init: {}}}
    reward: {name: internbootcamp}

Cases are made deterministic by giving each case its own global RNG state (seeded from ptbench's
per-case RNG, restored afterwards); a class that draws from elsewhere (numpy's global RNG, time)
is not made deterministic here. The reward calls `extract_output` and `_verify_correction` itself,
not `verify_score` (which prints a sample at random and would draw from the global RNG): a score
outside [0, 1], a non-number or an exception scores 0. Tested against a small class of ptbench's
own that follows the protocol (tests/bootcamp/adapters/test_adapters.py), not against InternBootcamp.
"""

from __future__ import annotations

import importlib
import json
import random
from functools import cache
from typing import Any

from ptbench.bootcamp.api import Generator, Identity, RewardCalculator, register_generator, register_reward
from ptbench.core.errors import UserError


@cache
def bootcamp_class(spec: Any) -> type[Any]:  # a foreign class, checked by its methods below
    """'package.module:ClassName' -> the class (one clear error when it is not there)."""
    if not isinstance(spec, str) or ":" not in spec:
        raise UserError(f"internbootcamp bootcamp {spec!r}: write it as 'package.module:ClassName'")
    module, _, name = spec.partition(":")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise UserError(f"internbootcamp bootcamp {spec!r} cannot be imported ({exc}); install InternBootcamp "
                        "(git clone its repository and pip install -e it) or check the name") from None  # fmt: skip
    for method in ("case_generator", "prompt_func", "extract_output", "_verify_correction"):
        if not callable(getattr(cls, method, None)):
            raise UserError(f"internbootcamp bootcamp {spec!r} has no {method}(): not a bootcamp class")
    return cls


@register_generator("internbootcamp")
class InternBootcampGenerator(Generator):
    """Params: bootcamp ('module:Class'), init (keyword arguments of the class)."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.spec = params.get("bootcamp")
        self.instance = bootcamp_class(self.spec)(**dict(params.get("init") or {}))

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> None:
        bootcamp_class(params.get("bootcamp"))

    def case(self, rng: random.Random) -> Identity:
        outside = random.getstate()
        random.seed(rng.getrandbits(64))
        try:
            case = self.instance.case_generator()
        finally:
            random.setstate(outside)
        return {"bootcamp": self.spec, "case": json.loads(json.dumps(case, default=str))}

    def prompt(self, identity: Identity) -> str:
        return str(bootcamp_class(identity["bootcamp"]).prompt_func(identity["case"]))


@register_reward("internbootcamp")
class InternBootcampReward(RewardCalculator):
    def extract(self, text: str) -> str | None:
        return text if text else None  # the class extracts (its own format) in verify

    def verify(self, extracted: str, identity: Identity) -> float:
        cls = bootcamp_class(identity.get("bootcamp"))
        try:
            solution = cls.extract_output(extracted)
            if solution is None:
                return 0.0
            judge = cls._verify_correction(solution, identity["case"])
        except Exception:  # noqa: BLE001 - a verifier that fails on a hostile answer gives no reward
            return 0.0
        if isinstance(judge, bool):
            return float(judge)
        if isinstance(judge, int | float) and 0.0 <= float(judge) <= 1.0:
            return float(judge)
        return 0.0
