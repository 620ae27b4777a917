"""Runs in mathematics_dataset's own venv (old sympy), never imported by ptbench: one JSON request a
line on stdin ({"module": "algebra__linear_1d", "seed": 7}, or {"list": true}), one JSON reply a line
on stdout ({"question": ..., "answer": ...}, {"modules": [...]}, or {"error": ...})."""

import json
import os
import random
import sys

import numpy as np
from mathematics_dataset.modules import modules
from mathematics_dataset.sample import polynomials as sample_polynomials
from mathematics_dataset.util import composition
from sympy.solvers.diophantine import base_solution_linear  # type: ignore[import-untyped]


def solve_linear_2d(c, a, b, t=None):
    """sympy 1.5.1's base_solution_linear with Python ints: the library hands it numpy.int64
    coefficients, which that sympy rejects under numpy 1.23 (polynomials__add failed on every seed,
    polynomials__compose on a third); the same integers, so the same case the library means."""
    return base_solution_linear(int(c), int(a), int(b), t if t is None else int(t))


sample_polynomials.diophantine_solve_linear_2d = solve_linear_2d


def expand_entities(context, **kwargs):
    """The library's expand_entities, its entities in first-seen order: it gathers them in a set of
    objects hashed by address and shuffles that, so the same seed ordered a question's definitions
    differently from run to run (polynomials__compose, case 0 of verify); the shuffle still orders them."""
    kwargs = kwargs.copy()
    seen = dict.fromkeys(context.child_entities)
    for key, maybe_entity in kwargs.items():
        if isinstance(maybe_entity, composition.Entity):
            seen[maybe_entity] = None
            kwargs[key] = maybe_entity.handle
    entities = list(seen)
    random.shuffle(entities)
    descriptions = []
    for entity in entities:
        descriptions.append(entity.child_description)
        if not entity.expression_used:
            descriptions.append(entity.description)
    return " ".join(s for s in descriptions if s), kwargs


composition.expand_entities = expand_entities


def flat(tree, prefix=""):
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(flat(value, prefix + key + "__"))
        else:
            out[prefix + key] = value
    return out


# the library's training entropy: each module's own default difficulty range
MODULES = flat(modules.train(lambda entropy: entropy))


def make(request):
    try:
        random.seed(request["seed"])
        np.random.seed(request["seed"] % 2**32)
        problem = MODULES[request["module"]]()
        return {"question": str(problem.question), "answer": str(problem.answer)}
    except Exception as exc:  # noqa: BLE001 - reported to the adapter, which names the module
        return {"error": f"{type(exc).__name__}: {exc}"}


def in_child(request):
    """Each case in a fork of this pristine process: the library's modules keep state between calls
    (sympy's caches, symbol counters), so the same seed gave other cases after other cases; a fork
    starts every case from the same state, whatever was asked before."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        with os.fdopen(write, "w") as out:
            out.write(json.dumps(make(request)))
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as inp:
        text = inp.read()
    os.waitpid(pid, 0)
    return json.loads(text) if text else {"error": "the case's process died"}


def main():
    for line in sys.stdin:
        request = json.loads(line)
        reply = {"modules": sorted(MODULES)} if request.get("list") else in_child(request)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
