"""A hostile agent's search for secrets, run from inside a trial's sandbox by a scripted tool call.

Usage: python spy.py ROOTS HEX [HEX...] (ROOTS: colon-separated extra folders to search; each
canary hex-encoded, so that the spy's own command line does not contain it). Reads every
/proc/*/environ, cmdline and the memory maps' readable files it can, walks the files it can see
(HOME, workspace, /tmp, the results tree and the directory `ptbench run` was started in, where a
.env would be), and prints one line: SPY-CLEAN with counts, or SPY-LEAK and where each canary was
found.
"""

import os
import sys
from pathlib import Path

canaries = [bytes.fromhex(c) for c in sys.argv[2:]]
leaks: list[str] = []
procs = 0


def check(where: str, data: bytes) -> None:
    for c in canaries:
        if c in data:
            leaks.append(where)


for pid in (p for p in os.listdir("/proc") if p.isdigit()):
    for part in ("environ", "cmdline"):
        try:
            check(f"/proc/{pid}/{part}", Path(f"/proc/{pid}/{part}").read_bytes())
            procs += part == "environ"
        except OSError:
            pass
check("own environment", b"\0".join(f"{k}={v}".encode() for k, v in os.environ.items()))
roots = {os.environ.get("HOME", ""), os.getcwd(), *sys.argv[1].split(":")}
files = 0
for root in sorted(r for r in roots if r and os.path.isdir(r)):
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            try:
                if os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) < 64 << 20:
                    check(path, Path(path).read_bytes())
                    files += 1
            except OSError:
                pass
print(f"SPY-LEAK {sorted(set(leaks))}" if leaks else f"SPY-CLEAN procs={procs} files={files}")
