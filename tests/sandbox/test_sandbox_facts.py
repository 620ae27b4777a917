"""Each sandbox carries its own facts, read through SANDBOXES (tests/test_plugin_names.py keeps any
other module from comparing against its name). These pin the built-in facts to what the name
comparisons they replaced decided, and show that a sandbox registered without facts (a plugin's, or
a name no longer installed) is treated like `none`: unknown containment is no containment."""

from __future__ import annotations

import pytest

from ptbench.sandbox.bwrap import bwrap_problem
from ptbench.sandbox.network import resolve_network
from ptbench.sandbox.request import SANDBOXES, SandboxCommand, SandboxFacts, sandbox_facts


def test_the_built_in_sandboxes_facts() -> None:
    none, bwrap, apptainer = (sandbox_facts(k) for k in ("none", "bwrap", "apptainer"))
    assert (none.isolates, bwrap.isolates, apptainer.isolates) == (False, True, True)
    assert (none.own_image, bwrap.own_image, apptainer.own_image) == (False, False, True)
    assert (none.gateway_network, bwrap.gateway_network, apptainer.gateway_network) == (False, True, False)
    assert bwrap.unavailable is bwrap_problem and none.unavailable is None and apptainer.unavailable is None
    assert bwrap.cannot_see == () and all(s.startswith("sandbox none:") for s in none.cannot_see)
    assert [s.split(":")[0] for s in apptainer.cannot_see] == ["sandbox apptainer"]
    assert sandbox_facts("auto") == bwrap  # auto becomes bwrap, or the trial does not start


def test_a_sandbox_without_facts_or_no_longer_installed_is_treated_like_none(monkeypatch) -> None:
    def jail(req):  # registered the plain way, as a plugin may
        return SandboxCommand(argv=list(req.argv), env=dict(req.env), cwd=req.workspace)

    SANDBOXES.names()  # the built-ins first, so the entry below is the only change
    monkeypatch.setitem(SANDBOXES._items, "site-jail", jail)
    for kind in ("site-jail", "removed-plugin"):
        assert sandbox_facts(kind) == SandboxFacts() and not sandbox_facts(kind).isolates
    # What the facts decide, through the real callers: no gateway-only network without a namespace.
    assert resolve_network("site-jail", {}, gateway=True) == "host"
    assert resolve_network("bwrap", {}, gateway=True) == "gateway"
    with pytest.raises(Exception, match="gateway needs sandbox: bwrap"):
        resolve_network("site-jail", {"network": "gateway"}, gateway=True)


def test_a_sandbox_registered_with_facts_carries_them(monkeypatch) -> None:
    def jail(req):
        return SandboxCommand(argv=list(req.argv), env=dict(req.env), cwd=req.workspace)

    facts = SandboxFacts(isolates=True, gateway_network=True, cannot_see=("site-jail: its own /tmp",))
    jail.facts = facts  # type: ignore[attr-defined]  (what register_sandbox sets)
    SANDBOXES.names()
    monkeypatch.setitem(SANDBOXES._items, "site-jail", jail)
    assert sandbox_facts("site-jail") is facts
    assert resolve_network("site-jail", {}, gateway=True) == "gateway"
