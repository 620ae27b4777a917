"""Forbidden API use: model APIs called by the agent's own code or commands (to generate training
data or answers), as opposed to the scaffold's own calls to its provider.

Scanned: the tool-call arguments of agent/trajectory.json (what the agent ran and wrote; the
CLI's own traffic is not in them), agent/calls.jsonl (the LLM gateway's log, where it exists:
every request whose client is not the scaffold), and the text files of the workspace and home/
(outside the scaffold's own state folders). Evidence: where, the line, what it matched.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ptbench.agents import load_agent
from ptbench.core.errors import UserError
from ptbench.integrity.checks import IntegrityCheck, register_check
from ptbench.integrity.contamination.sources import kind_of, walk_files
from ptbench.integrity.context import CheckContext, trajectory_texts
from ptbench.integrity.report import Finding, Unchecked

SDK_IMPORTS = (
    "openai",
    "anthropic",
    "google.generativeai",
    "google.genai",
    "google-genai",
    "together",
    "groq",
    "mistralai",
    "cohere",
    "litellm",
    "openrouter",
    "replicate",
    "fireworks",
    "deepseek",
    "voyageai",
    "vertexai",
    "ai21",
    "huggingface_hub.InferenceClient",
)
ENDPOINTS = (
    "api.openai.com",
    "api.anthropic.com",
    "generativelanguage.googleapis.com",
    "aiplatform.googleapis.com",
    "openrouter.ai",
    "api.together.xyz",
    "api.together.ai",
    "api.groq.com",
    "api.mistral.ai",
    "api.cohere.ai",
    "api.cohere.com",
    "api.deepseek.com",
    "api.fireworks.ai",
    "api.replicate.com",
    "api-inference.huggingface.co",
    "router.huggingface.co",
    "api.x.ai",
    "api.perplexity.ai",
    "dashscope.aliyuncs.com",
    "open.bigmodel.cn",
    "api.moonshot.cn",
    "api.z.ai",
)
# Wire paths of model APIs: any host (a self-hosted relay too) called on them.
API_PATHS = (
    r"/v1/chat/completions",
    r"/v1/completions",
    r"/v1/messages\b",
    r"/v1/responses\b",
    r":generateContent",
    r":streamGenerateContent",
)

_MODULES = "|".join(re.escape(m) for m in SDK_IMPORTS if "-" not in m and "." not in m or m.startswith("google."))
_IMPORT = re.compile(
    r"(?:^|[\s;'\"(])(?:from\s+(" + _MODULES + r")(?:\.[\w.]+)?\s+import\b|import\s+(" + _MODULES + r")\b|"
    r"from\s+(google)\s+import\s+(?:genai|generativeai)\b)",
    re.MULTILINE,
)
_ENDPOINT = re.compile("|".join(re.escape(e) for e in ENDPOINTS), re.IGNORECASE)
_PATH = re.compile("|".join(API_PATHS))
_INSTALL = re.compile(
    r"\b(?:pip3?|uv\s+pip|npm)\s+(?:install|add|i)\b[^\n]*?(?<![\w.-])("
    + "|".join(
        re.escape(m)
        for m in (
            "openai",
            "anthropic",
            "google-generativeai",
            "google-genai",
            "together",
            "groq",
            "mistralai",
            "cohere",
            "litellm",
            "openrouter",
            "replicate",
            "fireworks-ai",
            "@anthropic-ai/sdk",
            "@google/genai",
        )
    )
    + r")(?![\w-])"
)
_LOCAL = re.compile(r"https?://(localhost|127\.0\.0\.1|0\.0\.0\.0)[:/]")  # the agent's own vLLM server is fine
MAX_FILE = 16 << 20
# Installed packages (a venv in the workspace) mention these APIs in their own code; what the agent
# ran from them shows in the trajectory.
_SKIP_DIRS = (".git", "node_modules", "__pycache__", "eval_runs", "site-packages", "dist-packages")
_TEXT_SUFFIXES = {
    ".py",
    ".sh",
    ".ipynb",
    ".js",
    ".ts",
    ".mjs",
    ".txt",
    ".md",
    ".json",
    ".yaml",
    ".yml",
    ".toml",
    ".cfg",
    ".env",
    "",
}


def scan_text(text: str, where: str) -> list[dict]:
    hits = []
    for lineno, line in enumerate(text.splitlines(), 1):
        why = None
        if m := _ENDPOINT.search(line):
            why = f"endpoint {m.group(0)}"
        elif (m := _PATH.search(line)) and not _LOCAL.search(line):
            why = f"model API path {m.group(0)}"
        elif m := _IMPORT.search(line):
            why = f"imports {m.group(1) or m.group(2) or 'google.genai'}"
        elif m := _INSTALL.search(line):
            why = f"installs {m.group(1)}"
        if why:
            hits.append({"where": where, "line": lineno, "match": why, "text": line.strip()[:300]})
    return hits


def check(ctx: CheckContext) -> Finding:
    evidence: list[dict] = []
    sources = []
    trajectory = ctx.trajectory()
    if trajectory is not None:
        sources.append("agent/trajectory.json")
        for where, text in trajectory_texts(trajectory):
            if " tool " in where:  # what the agent ran or wrote; its own messages may just discuss the rules
                evidence += scan_text(text, f"trajectory {where}")
    elif (ctx.agent_dir / "trajectory.json").exists():
        raise Unchecked("agent/trajectory.json is unreadable")
    calls = ctx.agent_dir / "calls.jsonl"
    if calls.exists():
        sources.append("agent/calls.jsonl")
        evidence += _gateway_calls(calls)
    files = 0
    for root, name in ((ctx.workspace, "workspace"), (ctx.home, "home")):
        if not root.is_dir():
            continue
        scaffold = [root / s for s in ctx.state_folders()] if name == "home" else []

        def skip(p: Path, scaffold: list[Path] = scaffold) -> bool:
            return p.name in _SKIP_DIRS or any(p == s for s in scaffold)

        for path in walk_files(root, skip):
            if path.suffix.lower() not in _TEXT_SUFFIXES or kind_of(path) != "text" or path.stat().st_size > MAX_FILE:
                continue
            files += 1
            evidence += scan_text(path.read_text(errors="replace"), f"{name}/{path.relative_to(root).as_posix()}")
    sources.append(f"{files} workspace/home files")
    if trajectory is None and not calls.exists() and _expects_trajectory(ctx.spec.agent.name):
        raise Unchecked(
            "no agent/trajectory.json to check (the commands of an LLM agent cannot be reviewed without it)"
        )
    details = {"sources": sources}
    if evidence:
        what = sorted({e["match"] for e in evidence})
        return Finding(
            verdict="flagged",
            reason=f"model API use outside the scaffold: {', '.join(what[:5])}",
            evidence=evidence,
            details=details,
        )
    return Finding(verdict="clean", reason=f"no model API use in {', '.join(sources)}", details=details)


def _expects_trajectory(agent: str) -> bool:
    """LLM scaffolds have a trace parser; scripted agents (reference, base-model, shell fixtures) do not."""
    try:
        return load_agent(agent).trace_format != "text"
    except UserError:
        return True  # an agent we cannot look up is not assumed harmless


def _gateway_calls(path: Path) -> list[dict]:
    """Requests in the gateway's log that the scaffold did not make (`client` other than "scaffold")."""
    out = []
    for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        try:
            call = json.loads(line)
        except ValueError:
            raise Unchecked(f"agent/calls.jsonl line {lineno} is not JSON") from None
        if isinstance(call, dict) and call.get("client", "scaffold") != "scaffold":
            out.append(
                {
                    "where": "agent/calls.jsonl",
                    "line": lineno,
                    "match": f"gateway call by {call.get('client')}",
                    "text": json.dumps({k: call.get(k) for k in ("model", "url", "client")})[:300],
                }
            )
    return out


@register_check("api_usage")
class ApiUsageCheck(IntegrityCheck):
    harbor_unchecked = (
        "needs the agent's trajectory, which a Harbor verifier does not receive: it will be unchecked in every task "
        "(reward = the policy's); drop it from integrity.checks for Harbor to score clean runs"
    )
    """no model API used but the campaign's."""

    def check(self, ctx: CheckContext) -> Finding:
        return check(ctx)
