"""No module outside a plugin's own module compares against the plugin's registered name.

A benchmark, agent or environment carries its facts itself (issue 32): a table keyed by a task's
name in another module (`TOKEN_PHASES = {"gsm8k": ...}`, `if task_name == "gsm8k":`) is a fact the
next benchmark forgets silently, and one a plugin package cannot supply without editing ptbench. The
guard reads every module of `src/ptbench` with `ast` and reports, for each registry in `GUARDED`:
an equality or membership test against a string literal that is a registered name (`x == "gsm8k"`,
`x in {"gsm8k", ...}`, `case "gsm8k":`) and a dict literal keyed by registered names, anywhere but
in the module that defines that plugin (its class's module; for plugins that are not Python objects,
such as agents' folders, the registry's own package). Names used as arguments (`load_rows("gsm8k",
...)` inside gsm8k's module, `get_task("arithmetic")` in a demo) are not comparisons and pass.

The planted half writes a violating module into a temporary tree and shows the same scan reports it.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"


def _guarded() -> list[tuple[Any, str]]:
    """(registry, the package that owns its plugins): every `core.registry.Registry` of plugins."""
    from ptbench.agents.spec import AGENTS
    from ptbench.agents.traces.formats import TRACE_FORMATS
    from ptbench.backends.registry import BACKENDS
    from ptbench.bootcamp import api
    from ptbench.inference.base import ENGINES
    from ptbench.integrity.checks import CHECKS
    from ptbench.sandbox import SANDBOXES
    from ptbench.tasks.base import TASKS

    return [
        (TASKS, "ptbench.tasks"),
        (AGENTS, "ptbench.agents"),
        (TRACE_FORMATS, "ptbench.agents.traces"),
        (api.GENERATORS, "ptbench.bootcamp"),
        (api.TOOLS, "ptbench.bootcamp"),
        (api.INTERACTIONS, "ptbench.bootcamp"),
        (api.REWARDS, "ptbench.bootcamp"),
        (BACKENDS, "ptbench.backends"),
        (CHECKS, "ptbench.integrity"),
        (ENGINES, "ptbench.inference"),
        (SANDBOXES, "ptbench.sandbox"),
    ]


GUARDED: Callable[[], list[tuple[Any, str]]] = _guarded

# Modules that may name plugins of a registry, each with why. Keep it short: every entry is a fact
# some plugin does not carry itself.
ALLOWED: dict[tuple[str, str], str] = {
    ("ptbench.integrity.selftest.fixtures", "task"): "the self-test's own generated test data for the shipped "
    "benchmarks it measures (test fixtures, not facts of a benchmark)",
    ("ptbench.integrity.selftest.fixtures", "generator"): "the same table: its key 'arithmetic' is the task's name, "
    "which the bootcamp generator shares",
    ("ptbench.tasks.base", "tool"): "the tasks package's modules that hold no task (base, evaluate, options); the "
    "bootcamp tool 'evaluate' shares the word",
    ("ptbench.backends.htcondor.options", "agent"): "AGENT_PROVIDERS, an agent's API provider: to move into "
    "agent.yaml with the agent-CLI part of issue 32 (not this benchmark part)",
    ("ptbench.backends.jobs", "backend"): "the v0 migration of jobs files written before backends were plugins, "
    "by the built-in local backend: a file format's history, not a fact a new backend carries",
    ("ptbench.spec.campaign", "integrity check"): "the campaign's own `integrity.judge:` section, which the judge "
    "check needs; spec is the lowest layer and cannot read the registry",
    ("ptbench.sandbox.wire", "sandbox"): "the wire format's tag for None ('none'), not a sandbox",
    ("ptbench.bootcamp.adapters._puzzle_cases", "sandbox"): "chuk-puzzles-gym's KenKen cage operation 'none' (a "
    "cage with no operator), a word of the library's data, not a sandbox",
    ("ptbench.bootcamp.adapters.textworld_express", "integrity check"): "TextWorldExpress's Simon Says game "
    "parameter `memorization` (its engine's option name), not the integrity check",
    ("ptbench.results.policy", "sandbox"): "result.json records `sandbox_isolated` from the sandbox's facts; only a "
    "record written before that field falls back to the name `none` (and the code fence's isolation tag `none`)",
}


# Registered names that are also a common word of the data ptbench reads, not guarded (each with why).
SHARED_WORDS: dict[tuple[str, str], str] = {
    ("trace format", "text"): "the plain-text fallback's name is the word every provider's message format uses for "
    "a text block ('type': 'text'); the parsers' own format names are guarded",
}


@dataclass(frozen=True)
class Hit:
    module: str
    line: int
    kind: str
    name: str
    how: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.how} against {self.kind} '{self.name}'"


def owners(registries: list[tuple[Any, str]]) -> dict[str, dict[str, set[str]]]:
    """kind -> name -> the modules allowed to compare against it (the plugin's own module)."""
    out: dict[str, dict[str, set[str]]] = {}
    for registry, package in registries:
        table = out.setdefault(registry.kind, {})
        for name in registry.names():
            if (registry.kind, name) in SHARED_WORDS:
                continue
            item = registry.get(name)
            module = getattr(item, "__module__", None)
            table.setdefault(name, set()).add(module if isinstance(module, str) else package)
    return out


def _strings(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        for elt in node.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                yield elt.value


def _compared(tree: ast.AST) -> Iterator[tuple[int, str, str]]:
    """(line, literal, how) for each string a module compares against or keys a dict literal by."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(
            isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops
        ):
            for side in (node.left, *node.comparators):
                for s in _strings(side):
                    yield node.lineno, s, "comparison"
        elif isinstance(node, ast.MatchValue):
            for s in _strings(node.value):
                yield node.lineno, s, "match case"
        elif isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            if keys and len(keys) == len(node.keys):
                for s in keys:
                    yield node.lineno, s, "dict key"


def scan(src: Path, table: dict[str, dict[str, set[str]]]) -> list[Hit]:
    hits = []
    for path in sorted(src.rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for line, literal, how in _compared(tree):
            for kind, names in table.items():
                if literal in names and module not in names[literal] and (module, kind) not in ALLOWED:
                    if how == "dict key" and not _keyed_by_names(tree, line, names):
                        continue
                    hits.append(Hit(module, line, kind, literal, how))
    return hits


def _keyed_by_names(tree: ast.AST, line: int, names: dict[str, set[str]]) -> bool:
    """A dict literal is a table keyed by plugin names when every key is one (a record such as
    {"tool": ..., "identity": ...} that happens to share a key with a name is not)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and node.lineno == line:
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            if keys and all(k in names for k in keys):
                return True
    return False


def test_no_module_compares_against_another_plugins_name() -> None:
    hits = scan(SRC, owners(GUARDED()))
    assert not hits, "a plugin's fact lives outside it; move it onto the plugin:\n" + "\n".join(map(str, hits))


def test_the_guard_sees_the_shipped_names() -> None:
    table = owners(GUARDED())
    assert {"gsm8k", "arithmetic", "bootcamp"} <= set(table["task"]) and "reference" in table["agent"]
    assert table["task"]["gsm8k"] == {"ptbench.tasks.gsm8k"}  # the class's own module, not all of tasks/


def test_a_planted_table_keyed_by_task_name_is_caught(tmp_path: Path) -> None:
    """The regression half: the shapes this issue removed, planted in a copy, are each reported (for a
    benchmark, a sandbox, an engine, an integrity check and a trace format); the honest shapes beside
    them (a name as an argument, a comparison in the plugin's own module, a record whose one key
    happens to be a name, a shared word) are not."""
    pkg = tmp_path / "ptbench"
    (pkg / "tasks").mkdir(parents=True)
    (pkg / "integrity").mkdir()
    (pkg / "integrity" / "planted.py").write_text(
        textwrap.dedent("""
        TOKEN_PHASES = {"gsm8k": (4000, 3000), "aime2025": (16000,)}

        def extra(task_name, task):
            if task_name == "gsm8k":
                return 1
            if task_name in {"humaneval", "bfcl"}:
                return 2
            match task_name:
                case "gpqa":
                    return 3
            return load_rows("gsm8k", None, None)  # an argument: fine

        RECORD = {"tool": 1, "gsm8k_like": 2, "arithmetic": 3}  # a record, not a table of names

        def launch(sandbox, engine, check, fmt, block):
            if sandbox == "bwrap" or engine == "vllm":
                return 4
            return check in ("memorization",) or fmt == "codex-json" or block == "text"  # text: a shared word
        """)
    )
    (pkg / "tasks" / "gsm8k.py").write_text('def own(name):\n    return name == "gsm8k"\n')
    (pkg / "sandbox").mkdir()
    (pkg / "sandbox" / "bwrap.py").write_text('def own(kind):\n    return kind == "bwrap"\n')
    hits = scan(tmp_path, owners(GUARDED()))
    found = {(h.module, h.line, h.name, h.how) for h in hits}
    assert found == {
        ("ptbench.integrity.planted", 2, "gsm8k", "dict key"),
        ("ptbench.integrity.planted", 2, "aime2025", "dict key"),
        ("ptbench.integrity.planted", 5, "gsm8k", "comparison"),
        ("ptbench.integrity.planted", 7, "humaneval", "comparison"),
        ("ptbench.integrity.planted", 7, "bfcl", "comparison"),
        ("ptbench.integrity.planted", 10, "gpqa", "match case"),
        ("ptbench.integrity.planted", 17, "bwrap", "comparison"),
        ("ptbench.integrity.planted", 17, "vllm", "comparison"),
        ("ptbench.integrity.planted", 19, "memorization", "comparison"),
        ("ptbench.integrity.planted", 19, "codex-json", "comparison"),
    }, hits
