"""A dependency's private name is used in its private-API module only (core/private_aiohttp.py,
core/private_multiprocessing.py, core/private_verl.py, backends/slurm/private_submitit.py), where its
test checks it against the installed library; anywhere else an upgrade would break it unseen."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_BSUITE_STATE = [
    f"env._{a}" for a in "ball_x paddle_x context query need_umbrella position goal_pos velocity state".split()
]
# private name -> the one module (relative to the repository) allowed to use it
PRIVATE_NAMES = {
    "_server.sockets": "src/ptbench/core/private_aiohttp.py",
    "_send_headers_immediately": "src/ptbench/core/private_aiohttp.py",
    "_forkserver": "src/ptbench/core/private_multiprocessing.py",
    "_resource_tracker": "src/ptbench/core/private_multiprocessing.py",
    "_active_tools": "src/ptbench/core/private_verl.py",
    "_active_tool_schemas": "src/ptbench/core/private_verl.py",
    "_make_sbatch_string": "src/ptbench/backends/slurm/private_submitit.py",
    "core._submit": "src/ptbench/backends/slurm/private_submitit.py",
    "_generate_hamiltonian_path": "src/ptbench/bootcamp/adapters/_puzzle_cases.py",  # chuk-puzzles-gym's numberlink
    # reasoning-core's task -> module map (a generated task's batch, for `bootcamp list`'s domain column)
    "_task_to_module_map": "src/ptbench/bootcamp/adapters/reasoning_core_generated.py",
    # bsuite 0.3.6's environment state, read by the oracles (no public accessors; tests/bootcamp/adapters/test_bsuite.py
    # plays each oracle against the installed library)
    **dict.fromkeys(_BSUITE_STATE, "src/ptbench/bootcamp/adapters/bsuite.py"),
}


def misplaced_uses(root: Path) -> list[str]:
    """`path:line: name` for each private name used outside its module, under root's src/ and scripts/."""
    found = []
    for path in sorted([*root.glob("src/**/*.py"), *root.glob("scripts/**/*.py")]):
        rel = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for name, home in PRIVATE_NAMES.items():
                if rel != home and re.search(rf"(?<![\w]){re.escape(name)}\b", line):
                    found.append(f"{rel}:{number}: {name}")
    return found


def test_private_names_appear_only_in_their_modules() -> None:
    assert misplaced_uses(REPO) == []
    for home in set(PRIVATE_NAMES.values()):
        assert (REPO / home).is_file(), home


def test_a_planted_private_use_is_found(tmp_path: Path) -> None:
    planted = tmp_path / "src" / "ptbench" / "gateway" / "server.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("class R:\n    _send_headers_immediately = False\nport = site._server.sockets[0]\n")
    assert misplaced_uses(tmp_path) == [
        "src/ptbench/gateway/server.py:2: _send_headers_immediately",
        "src/ptbench/gateway/server.py:3: _server.sockets",
    ]
