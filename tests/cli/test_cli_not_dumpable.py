"""Every ptbench process is non-dumpable from its CLI entry: `ptbench run` holds the job's keys
(environment, .env) before it starts any runner, and under `sandbox: none` the agent is its uid.

Real processes of one uid, the reader unprivileged (tests/environ_reader.py): the ptbench CLI's
/proc/PID/environ is closed to a same-uid reader; the control, a plain python of that uid with the
same environment, is readable, so the check can fail.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tests.environ_reader import SRC, environ_read

KEY = "sk-cli-canary-5e0f3a9c27"


def test_the_ptbench_cli_hides_its_environment_from_its_own_uid() -> None:
    shared = Path(tempfile.mkdtemp(prefix="ptb-dumpable-"))
    try:
        shared.chmod(0o777)  # the unprivileged holder writes its ready file here
        script = shared / "script.yaml"
        script.write_text("turns: [{message: hello}]\n")
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": SRC, "OPENAI_API_KEY": KEY, "HOME": str(shared)}
        cli = environ_read(
            [
                sys.executable,
                "-m",
                "ptbench",
                "provider",
                "serve",
                "--script",
                str(script),
                "--ready-file",
                str(shared / "ready.json"),
            ],
            KEY,
            env=env,
            ready_file=shared / "ready.json",
        )
        control = environ_read(
            [sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(60)"], KEY, env=env
        )
    finally:
        for f in shared.iterdir():
            f.unlink()
        shared.rmdir()
    assert "PermissionError" in cli, cli
    assert control == "1", control
