"""`sandbox_options.network`: what the agent can reach.

- `gateway`: its own network namespace with loopback only; the trial's gateway (its model calls
  and the judge route) is the one thing reachable, through a bridge to the gateway's Unix socket
  (bwrap.py, netbridge.py). No other host port, no Hub, no pip, no outside address.
- `host`: the host's network, as without a sandbox.

The default is `gateway` under bwrap for an agent whose every model call goes through the gateway
(`upstream:` in agent.yaml, no subscription login), `host` otherwise (subscription logins call their
provider themselves; `sandbox: none` has no namespace to give; apptainer shares the host's).
"""

from __future__ import annotations

from typing import Any

from ptbench.core.errors import UserError
from ptbench.sandbox.request import sandbox_facts

NETWORKS = ("gateway", "host")


def resolve_network(sandbox: str, options: dict[str, Any], *, gateway: bool, agent: str = "the agent") -> str:
    """The network a trial's agent gets; a request that cannot be honoured is a user error."""
    asked = options.get("network")
    bwrap = sandbox_facts(sandbox).gateway_network  # auto: that of what it becomes, or the trial does not start
    if asked is None:
        return "gateway" if bwrap and gateway else "host"
    if asked not in NETWORKS:
        raise UserError(f"sandbox_options.network: '{asked}' is not one of {', '.join(NETWORKS)}")
    if asked == "gateway" and not bwrap:
        raise UserError(
            f"sandbox_options.network: gateway needs sandbox: bwrap (this campaign has sandbox: {sandbox}); "
            "use network: host"
        )
    if asked == "gateway" and not gateway:
        raise UserError(
            f"sandbox_options.network: gateway, but {agent} does not make all its model calls through the trial "
            "gateway (a subscription login, or no `upstream:` in its agent.yaml); use network: host"
        )
    return asked
