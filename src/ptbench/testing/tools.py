"""Turn a scripted action into a call of a tool the calling CLI actually advertised.

Every CLI names its tools differently (Claude Code `Bash`/`Write`, Codex `shell`/`exec_command`/
`apply_patch`, Gemini CLI `run_shell_command`/`write_file`, OpenCode `bash`/`write`) and its
argument names differ too (`command` string or argv array, `file_path`/`filePath`/`path`). The
choice is made from the request's tool list and JSON schemas, so a renamed tool or argument in a
new CLI version still works if it stays recognisable.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Literal

from ptbench.testing.script import Turn

# Preference order: the first name present wins; then any name containing "shell" or "bash".
_SHELL_NAMES = (
    "Bash",
    "bash",
    "run_shell_command",
    "shell",
    "exec_command",
    "shell_command",
    "execute_command",
    "terminal",
)
_WRITE_NAMES = ("Write", "write", "write_file", "create_file", "WriteFile")
_PATCH_NAMES = ("apply_patch",)
# Codex's exec_command returns after yield_time_ms with a session id while the command runs on;
# the provider then polls with write_stdin until it ends, as a model would.
POLL_TOOLS = ("write_stdin",)
_STILL_RUNNING = re.compile(r"Process running with session ID (\d+)")


@dataclass
class ToolSpec:
    name: str
    kind: Literal["function", "custom", "local_shell"] = "function"
    schema: dict[str, Any] = field(default_factory=dict)

    @property
    def properties(self) -> dict[str, Any]:
        return self.schema.get("properties") or {}

    @property
    def required(self) -> list[str]:
        return list(self.schema.get("required") or [])


@dataclass
class ToolCall:
    name: str
    kind: Literal["function", "custom", "local_shell"]
    arguments: dict[str, Any] | None = None  # function and local_shell calls
    raw_input: str | None = None  # custom (freeform) calls, e.g. Codex's apply_patch grammar tool


def _find(tools: list[ToolSpec], names: tuple[str, ...], fuzzy: tuple[str, ...] = ()) -> ToolSpec | None:
    by_name = {t.name: t for t in tools}
    for n in names:
        if n in by_name:
            return by_name[n]
    for t in tools:
        low = t.name.lower()
        if any(f in low for f in fuzzy):
            return t
    return None


def shell_tool(tools: list[ToolSpec]) -> ToolSpec | None:
    local = next((t for t in tools if t.kind == "local_shell"), None)
    return _find(tools, _SHELL_NAMES, ("shell", "bash")) or local


def write_tool(tools: list[ToolSpec]) -> ToolSpec | None:
    return _find(tools, _WRITE_NAMES)


def can_act(tools: list[ToolSpec]) -> bool:
    """A request that advertises no shell tool is a side request (title, summary, sub-agent)."""
    return shell_tool(tools) is not None


def poll_call(view: Any) -> ToolCall | None:
    """A write_stdin poll when the request ends with a still-running command's output."""
    m = _STILL_RUNNING.search(view.pending_output or "")
    spec = _find(view.tools, POLL_TOOLS)
    if m is None or spec is None:
        return None
    args = {"session_id": int(m.group(1)), "chars": "", "yield_time_ms": 300_000}
    return ToolCall(spec.name, "function", {k: v for k, v in args.items() if k in spec.properties or k == "session_id"})


def _pick(props: dict[str, Any], candidates: tuple[str, ...]) -> str | None:
    return next((c for c in candidates if c in props), None)


def _filler(name: str, schema: dict[str, Any]) -> Any:
    """A harmless value for a required argument the script says nothing about."""
    if "enum" in schema:
        return schema["enum"][0]
    typ = str(schema.get("type", "")).lower()  # Gemini spells types in capitals
    if typ in ("integer", "number"):
        return 0
    if typ == "boolean":
        return False
    if typ == "array":
        return []
    if typ == "object":
        return {}
    return "Scripted step" if "desc" in name.lower() else ""


def _fill_required(spec: ToolSpec, args: dict[str, Any]) -> dict[str, Any]:
    for name in spec.required:
        if name not in args:
            args[name] = _filler(name, spec.properties.get(name) or {})
    return args


def _shell_call(spec: ToolSpec, command: str, timeout_s: float | None) -> ToolCall:
    if spec.kind == "local_shell":
        return ToolCall(spec.name, "local_shell", {"type": "exec", "command": ["bash", "-lc", command]})
    props = spec.properties
    key = _pick(props, ("command", "cmd", "script", "commandLine")) or "command"
    is_argv = str((props.get(key) or {}).get("type", "")).lower() == "array"
    args: dict[str, Any] = {key: ["bash", "-lc", command] if is_argv else command}
    if timeout_s is not None:
        tkey = _pick(props, ("timeout_ms", "timeout"))
        if tkey:  # every CLI seen takes milliseconds (Claude Code, OpenCode, Codex)
            args[tkey] = int(timeout_s * 1000)
    return ToolCall(spec.name, "function", _fill_required(spec, args))


def _heredoc(path: str, content: str) -> str:
    marker = "PTBENCH_EOF"
    while marker in content:
        marker += "_"
    body = content if content.endswith("\n") else content + "\n"
    parent = f"mkdir -p {shlex.quote(path.rsplit('/', 1)[0])} && " if "/" in path.strip("/") else ""
    return f"{parent}cat > {shlex.quote(path)} <<'{marker}'\n{body}{marker}"


def _patch(path: str, content: str) -> str:
    lines = content.splitlines() or [""]
    return "*** Begin Patch\n*** Add File: " + path + "\n" + "".join(f"+{ln}\n" for ln in lines) + "*** End Patch\n"


def to_tool_call(turn: Turn, tools: list[ToolSpec], cwd: str | None) -> ToolCall:
    """The call that performs `turn` (a shell or write_file turn) with the advertised tools."""
    sh = shell_tool(tools)
    if turn.shell is not None:
        assert sh is not None, "caller checks can_act() first"
        return _shell_call(sh, turn.shell, turn.timeout_s)
    assert turn.write_file is not None
    path = turn.write_file.path
    if cwd and not path.startswith("/"):
        path = cwd.rstrip("/") + "/" + path  # Claude Code's and OpenCode's Write insist on absolute paths
    content = turn.write_file.content
    wr = write_tool(tools)
    if wr is not None:
        props = wr.properties
        pkey = _pick(props, ("file_path", "filePath", "path", "filename", "absolute_path")) or "file_path"
        ckey = _pick(props, ("content", "contents", "text", "file_text")) or "content"
        return ToolCall(wr.name, "function", _fill_required(wr, {pkey: path, ckey: content}))
    patch = _find(tools, _PATCH_NAMES)
    if patch is not None:
        if patch.kind == "custom":
            return ToolCall(patch.name, "custom", raw_input=_patch(path, content))
        key = _pick(patch.properties, ("input", "patch")) or "input"
        return ToolCall(patch.name, "function", _fill_required(patch, {key: _patch(path, content)}))
    assert sh is not None
    return _shell_call(sh, _heredoc(path, content), None)


_CWD_PATTERNS = (
    re.compile(r"<cwd>\s*([^<\s][^<]*?)\s*</cwd>"),
    re.compile(r"[Pp]rimary working directory:\s*(/\S+)"),
    re.compile(r"[Ww]orking directory:\s*(/\S+)"),
    re.compile(r"working in the (?:following )?director(?:y|ies)[^/\n]*?(/[^\s'\"`]+)"),
    re.compile(r"Workspace Directories:\**\s*\n\s*-\s*(/\S+)"),
    re.compile(r"[Cc]urrent working directory[^/\n]*?(/[^\s'\"`]+)"),
)


def find_cwd(text: str) -> str | None:
    """The agent's working directory as the CLI states it in its system prompt or context."""
    for pat in _CWD_PATTERNS:
        m = pat.search(text)
        if m:
            return m.group(1).rstrip(".,:;")
    return None
