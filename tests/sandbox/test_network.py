"""`network: gateway`, for real: bwrap's own network namespace, the gateway reached over its Unix
socket through the in-sandbox bridge, and nothing else (no other host port, no outside address).

The upstream is the scripted provider; the gateway is the real one, in this process, as in a trial.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ptbench.core.errors import UserError
from ptbench.gateway import Gateway, Upstream, gateway_in_thread, new_trial_token
from ptbench.sandbox import SandboxRequest, build_command
from ptbench.sandbox.network import resolve_network
from tests.support import require

PROBE = textwrap.dedent("""
    import json, socket, sys, urllib.request, urllib.error
    gw_port, token, provider_port, host_port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    out = {}
    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 10, "stream": True,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    headers = {"x-api-key": token, "content-type": "application/json", "anthropic-version": "2023-06-01"}
    req = urllib.request.Request(f"http://127.0.0.1:{gw_port}/v1/messages", data=body, method="POST", headers=headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        out["gateway"] = [r.status, r.read().decode()]
    for name, host, port in [("provider", "127.0.0.1", provider_port), ("host_port", "127.0.0.1", host_port),
                             ("outside", "1.1.1.1", 443), ("outside_v6", "2606:4700:4700::1111", 443)]:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        s = socket.socket(family)
        s.settimeout(5)
        try:
            s.connect((host, port))
            out[name] = "CONNECTED"
        except OSError as exc:
            out[name] = type(exc).__name__
        finally:
            s.close()
    print(json.dumps(out))
""")


def test_only_the_gateway_is_reachable(tmp_path: Path, scripted_provider) -> None:
    require(shutil.which("bwrap") is not None, "bubblewrap not installed (apt-get install bubblewrap)")
    provider = scripted_provider([{"message": "hello through the bridge"}])
    provider_port = int(provider.base_url.rsplit(":", 1)[1].split("/")[0])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (ws / "probe.py").write_text(PROBE)
    token = new_trial_token()
    sock = tmp_path / "gw.sock"
    up = Upstream("agent", provider.base_url, "sk-real-canary", models={"claude-sonnet-4-5": "claude-sonnet-4-5"})
    try:
        with gateway_in_thread(Gateway(token, up, calls_path=tmp_path / "calls.jsonl"), unix_path=str(sock)) as gw:
            port = int(gw.base_url.rsplit(":", 1)[1])
            req = SandboxRequest(
                argv=[
                    sys.executable,
                    str(ws / "probe.py"),
                    str(port),
                    token,
                    str(provider_port),
                    str(listener.getsockname()[1]),
                ],
                env={"PATH": os.environ["PATH"], "HOME": str(home)},
                workspace=ws,
                home=home,
                read_only=[Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()],
                network="gateway",
                gateway_socket=sock,
                gateway_port=port,
            )
            cmd = build_command("bwrap", req)
            assert "--unshare-net" in cmd.argv
            out = subprocess.run(cmd.argv, env=cmd.env, cwd=cmd.cwd, capture_output=True, text=True, timeout=120)
    finally:
        listener.close()
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert (
        report["gateway"][0] == 200 and "text_delta" in report["gateway"][1] and "message_stop" in report["gateway"][1]
    ), report
    for name in ("provider", "host_port", "outside", "outside_v6"):
        assert report[name] != "CONNECTED", (name, report)
    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert [c["status"] for c in calls] == [200] and calls[0]["output_tokens"] > 0


def test_the_network_setting_is_checked() -> None:
    assert resolve_network("bwrap", {}, gateway=True) == "gateway"
    assert resolve_network("auto", {}, gateway=True) == "gateway"
    assert resolve_network("bwrap", {}, gateway=False) == "host"  # a subscription login calls its provider itself
    assert resolve_network("none", {}, gateway=True) == "host"
    assert resolve_network("bwrap", {"network": "host"}, gateway=True) == "host"
    for sandbox, options, gateway, fragment in [
        ("none", {"network": "gateway"}, True, "needs sandbox: bwrap"),
        ("apptainer", {"network": "gateway"}, True, "needs sandbox: bwrap"),
        ("bwrap", {"network": "gateway"}, False, "subscription login"),
        ("bwrap", {"network": "lan"}, True, "not one of"),
    ]:
        with pytest.raises(UserError, match=fragment):
            resolve_network(sandbox, options, gateway=gateway)
