"""verl's private API (core/private_verl.py), asked of verl's own source in the verl venv (its
transformers pin conflicts with ours): an upgrade that renames an attribute fails here."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ptbench.core import private_verl
from tests.support import require

REPO = Path(__file__).resolve().parents[2]


def test_verl_tool_agent_loop_still_reads_the_active_tools_attributes() -> None:
    venv = Path(os.environ.get("PTBENCH_VERL_VENV", REPO / ".venv-verl")) / "bin" / "python"
    require(venv.is_file(), f"{venv} missing; build it with `bash scripts/verl-venv.sh`")
    code = (
        "import inspect, sys\n"
        "from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop\n"
        "src = inspect.getsource(ToolAgentLoop)\n"
        "for attr in sys.argv[1:]:\n"
        "    assert f'getattr(agent_data, \"{attr}\"' in src, attr\n"
        "print('ok')\n"
    )
    attrs = [private_verl.ACTIVE_TOOLS, private_verl.ACTIVE_TOOL_SCHEMAS]
    out = subprocess.run([str(venv), "-c", code, *attrs], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


def test_active_tools_round_trip_on_the_attributes_verl_reads() -> None:
    class Data:
        pass

    data = Data()
    private_verl.set_verl_active_tools(data, {"t": 1}, [{"name": "t"}])
    assert data._active_tools == {"t": 1} and data._active_tool_schemas == [{"name": "t"}]  # type: ignore[attr-defined]
    assert private_verl.verl_active_tools(data) == {"t": 1}
    assert private_verl.verl_active_tool_schemas(data) == [{"name": "t"}]
