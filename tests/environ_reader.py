"""Can a same-uid process read another's /proc/PID/environ? (the check behind the non-dumpable tests)

Both processes run as the tests' uid; when that is root, both drop every capability (setpriv: no
CAP_SYS_PTRACE, no CAP_DAC_OVERRIDE), which makes them what a runner and an agent of one ordinary
uid are. (Not setpriv to nobody: nobody cannot read the test's python environment under /root.)
`environ_read(holder_argv, secret)` starts the holder, waits until it is ready (its first stdout
line is "ready", or the file `ready_file` exists), then reads its environ as that uid and answers
how many times `secret` was found there, or the reader's last error line (PermissionError for a
non-dumpable holder).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.support import require

SRC = str(Path(__file__).resolve().parents[1] / "src")


def unprivileged_same_uid() -> list[str]:
    if os.geteuid() != 0:
        return []
    require(shutil.which("setpriv") is not None, "setpriv (util-linux) is not installed")
    return ["setpriv", "--bounding-set=-all", "--inh-caps=-all"]


def environ_read(holder_argv: list[str], secret: str, *, env: dict[str, str], ready_file: Path | None = None) -> str:
    prefix = unprivileged_same_uid()
    holder = subprocess.Popen(
        [*prefix, *holder_argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        if ready_file is None:
            line = holder.stdout.readline().strip()
            assert line == "ready", (line, holder.stderr.read() if holder.poll() is not None else "")
        else:
            deadline = time.monotonic() + 60
            while not ready_file.exists():
                assert holder.poll() is None and time.monotonic() < deadline, (
                    holder.stderr.read() if holder.poll() is not None else "timeout"
                )
                time.sleep(0.1)
        reader = subprocess.run(
            [
                *prefix,
                sys.executable,
                "-c",
                f"print(open('/proc/{holder.pid}/environ', 'rb').read().count(b'{secret}'))",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        return reader.stdout.strip() or reader.stderr.strip().splitlines()[-1]
    finally:
        holder.kill()
        holder.wait(10)
