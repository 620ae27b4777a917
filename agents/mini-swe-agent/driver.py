"""Runs mini-swe-agent (the PyPI package, in its own venv) non-interactively for ptbench.

`mini -y --exit-immediately` has no resume and writes its trajectory only to a file; this driver
uses the same package pieces (mini.yaml, LitellmModel, LocalEnvironment, DefaultAgent: the class
its batch runs use, which never prompts) and adds what the harness needs:
  - every message, as mini-swe-agent adds it, is printed as one JSON line on stdout (the native
    log ptbench parses into the common trace), so a run killed at its deadline keeps its steps;
  - a session id and the full trajectory in $HOME/.mini-swe-agent/sessions/ID.traj.json, which a
    continuation (--resume ID) reloads, adding the continuation message as a user turn.
The model is any OpenAI-compatible endpoint through litellm (`openai/MODEL` with api_base); the key
is read from the variable named by --key-env (the trial's token behind ptbench's gateway).
Runs with mini-swe-agent's python only: nothing here imports ptbench.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")  # no banner on stdout
os.environ.setdefault("MSWEA_CONFIGURED", "true")  # never the first-run setup prompt
os.environ.setdefault("LITELLM_LOG", "ERROR")

import litellm  # noqa: E402
from minisweagent import __version__  # noqa: E402
from minisweagent.agents.default import DefaultAgent  # noqa: E402
from minisweagent.config import get_config_from_spec  # noqa: E402
from minisweagent.environments.local import LocalEnvironment  # noqa: E402
from minisweagent.exceptions import FormatError, InterruptAgentFlow  # noqa: E402
from minisweagent.models import get_model  # noqa: E402
from minisweagent.utils.serialize import recursive_merge  # noqa: E402

litellm.suppress_debug_info = True  # its hints go to stdout, between the JSON lines


def emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event, default=str) + "\n")
    sys.stdout.flush()


def _usage(message: dict[str, Any]) -> dict[str, Any] | None:
    response = (message.get("extra") or {}).get("response")
    usage = response.get("usage") if isinstance(response, dict) else None
    return usage if isinstance(usage, dict) else None


def message_event(message: dict[str, Any]) -> dict[str, Any]:
    """One message as the native log holds it: what the trace needs, not the raw API response."""
    extra = message.get("extra") or {}
    event: dict[str, Any] = {"type": "message", "role": message.get("role")}
    if message.get("role") == "tool":  # the command's own output, not the observation template around it
        event["output"] = extra.get("raw_output")
    else:
        event["content"] = message.get("content")
    if message.get("tool_calls"):
        event["tool_calls"] = [
            {"id": a.get("tool_call_id"), "command": a.get("command")} for a in extra.get("actions") or []
        ]
    for key in ("tool_call_id",):
        if message.get(key):
            event[key] = message[key]
    for key in ("returncode", "exception_info", "exit_status", "interrupt_type", "timestamp", "cost"):
        if extra.get(key) not in (None, ""):
            event[key] = extra[key]
    if (usage := _usage(message)) is not None:
        event["usage"] = usage
    if extra.get("interrupt_type") == "FormatError":  # the reply it answers is not kept as a message: say it here
        response = extra.get("response")
        choices = response.get("choices") if isinstance(response, dict) else None
        if choices and isinstance(choices[0], dict):
            event["reply"] = (choices[0].get("message") or {}).get("content")
    return event


class StreamingAgent(DefaultAgent):
    """DefaultAgent that prints each message and can go on from an earlier session's messages."""

    def add_messages(self, *messages: dict) -> list[dict]:
        for m in messages:
            emit(message_event(m))
        return super().add_messages(*messages)

    def resume(self, messages: list[dict], note: str) -> dict:
        """DefaultAgent.run's loop, from the messages of an earlier run plus a user note."""
        self.extra_template_vars |= {"task": note}
        while messages and messages[-1].get("role") == "exit":
            messages = messages[:-1]
        self.messages = list(messages)
        self.add_messages(self.model.format_message(role="user", content=note))
        while True:
            try:
                self.step()
                self.n_consecutive_format_errors = 0
            except FormatError as e:
                self.n_consecutive_format_errors += 1
                if 0 < self.config.max_consecutive_format_errors <= self.n_consecutive_format_errors:
                    self.add_messages(
                        *e.messages,
                        {
                            "role": "exit",
                            "content": "RepeatedFormatError",
                            "extra": {"exit_status": "RepeatedFormatError"},
                        },
                    )
                else:
                    self.add_messages(*e.messages)
            except InterruptAgentFlow as e:
                self.add_messages(*e.messages)
            except Exception as e:
                self.handle_uncaught_exception(e)
                raise
            finally:
                self.save(self.config.output_path)
            if self.messages[-1].get("role") == "exit":
                break
        return self.messages[-1].get("extra", {})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="litellm model name, e.g. openai/Qwen/Qwen3-8B")
    p.add_argument("--api-base", default="", help="OpenAI-compatible base URL (ending in /v1)")
    p.add_argument("--key-env", default="OPENAI_API_KEY", help="variable holding the key (or the trial token)")
    p.add_argument("--config", default="mini.yaml", help="mini-swe-agent config (a built-in name or a path)")
    p.add_argument("--config-json", default="{}", help="a mapping merged over the config (agent option mini_config)")
    p.add_argument("--timeout", type=int, default=3600, help="seconds one bash command may run")
    p.add_argument("--step-limit", type=int, default=0)
    p.add_argument("--sessions", type=Path, default=Path.home() / ".mini-swe-agent" / "sessions")
    p.add_argument("--resume", default="", help="session id to continue (its trajectory is reloaded)")
    p.add_argument("task", help="the task (first run) or the continuation message (--resume)")
    args = p.parse_args(argv)

    session = args.resume or uuid.uuid4().hex
    traj = args.sessions / f"{session}.traj.json"
    previous: list[dict] = []
    if args.resume:
        try:
            previous = json.loads(traj.read_text())["messages"]
        except (OSError, ValueError, KeyError) as exc:
            emit({"type": "error", "message": f"cannot resume session {session}: {exc}"})
            return 2
    emit({"type": "session", "session_id": session, "mini_version": __version__, "resumed": bool(args.resume)})

    # litellm's openai provider reads OPENAI_API_KEY; the key stays out of the config (and the trajectory).
    os.environ["OPENAI_API_KEY"] = os.environ.get(args.key_env) or "none"
    model_kwargs: dict[str, Any] = {}
    if args.api_base:
        model_kwargs["api_base"] = args.api_base
    overrides = {
        "agent": {"step_limit": args.step_limit, "cost_limit": 0, "output_path": str(traj)},
        # Unknown (open) models have no litellm price: the gateway counts tokens and cost instead.
        "model": {"model_name": args.model, "cost_tracking": "ignore_errors", "model_kwargs": model_kwargs},
        "environment": {"timeout": args.timeout, "cwd": os.getcwd()},
    }
    config = recursive_merge(get_config_from_spec(args.config), json.loads(args.config_json), overrides)
    for section in ("agent", "environment", "model"):  # the interactive agent's keys; the class is fixed here
        config[section].pop(f"{section}_class", None)
    for key in ("mode", "whitelist_actions", "confirm_exit"):
        config["agent"].pop(key, None)
    model = get_model(config=config["model"])
    env = LocalEnvironment(**config["environment"])
    agent = StreamingAgent(model, env, **config["agent"])
    try:
        result = agent.resume(previous, args.task) if args.resume else agent.run(args.task)
    except Exception as exc:  # already recorded as the exit message; say it once more for the log
        emit({"type": "error", "message": f"{type(exc).__name__}: {exc}"})
        return 1
    emit(
        {
            "type": "exit",
            "session_id": session,
            "exit_status": result.get("exit_status", ""),
            "submission": result.get("submission", ""),
            "api_calls": agent.n_calls,
        }
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
