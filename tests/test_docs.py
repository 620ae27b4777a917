"""The docs stay true: README.md and docs/*.md are checked against the tree and the CLI.

- every relative link resolves to a file, and a `#anchor` to a heading of the target (GitHub's slugs);
- every `ptbench …` command shown in a code block or a code span names a command of the real CLI
  (walked in-process through the typer app, and each one's `--help` run with click's CliRunner),
  with options that command has;
- the layer table in docs/design.md lists the import contract's layers of pyproject.toml, in order;
- the README stays a front page (at most 150 lines).

Each checker is also run on a planted mistake, so none of them passes by finding nothing.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

# the module, not the `main` function that ptbench.cli re-exports under the same name
cli_main = importlib.import_module("ptbench.cli.main")

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]  # docs/guides/ too

_FENCE = re.compile(r"^(\s*)(```|~~~)")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_SPAN = re.compile(r"(`+)(.+?)\1")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _split(text: str) -> tuple[list[str], list[str]]:
    """The prose lines (code spans kept) and the lines of fenced code blocks."""
    prose: list[str] = []
    code: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        m = _FENCE.match(line)
        if m:
            fence = None if fence == m.group(2) else (fence or m.group(2))
            continue
        (code if fence else prose).append(line)
    return prose, code


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lowercase, punctuation removed, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    prose, _ = _split(path.read_text())
    seen: dict[str, int] = {}
    out = set()
    for line in prose:
        m = _HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(path: Path) -> list[str]:
    prose, _ = _split(path.read_text())
    bad = []
    for line in prose:
        line = _SPAN.sub("", line)  # a link written inside a code span is text, not a link
        for target in _LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            if not dest.exists():
                bad.append(f"{path.name}: {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(f"{path.name}: {target}: no heading with anchor #{anchor}")
    return bad


def shown_commands(path: Path) -> list[str]:
    """`ptbench …` command lines of the code blocks (continuation lines joined) and code spans."""
    prose, code = _split(path.read_text())
    lines: list[str] = []
    pending = ""
    for line in code:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    for line in prose:
        lines += [m.group(2) for m in _SPAN.finditer(line)]
    out = []
    for line in lines:
        line = re.sub(r"^\s*\$\s+", "", line).strip()
        if line.startswith("ptbench "):
            out.append(re.split(r"\s+#", line, maxsplit=1)[0].strip())
    return out


def _root_command() -> Any:
    """The app as a click group (typer may carry its own click: groups are told by `.commands`)."""
    cli_main._register_subapps([])  # the sub-command groups main() adds before it runs
    group = typer.main.get_command(cli_main.app)
    assert hasattr(group, "commands")
    return group


def resolve(root: Any, line: str) -> tuple[list[str], list[str]]:
    """The command path a shown line names, and its problems (unknown command, unknown option)."""
    words = line.split()[1:]
    path: list[str] = []
    cmd = root
    for word in words:
        if not hasattr(cmd, "commands") or word.startswith(("-", "[")):
            break
        names = word.split("|")  # `run|submit`: both must exist
        subs = [cmd.commands.get(n) for n in names]
        if any(s is None for s in subs):
            if not path:
                return path, [f"`{line}`: no command `ptbench {word}`"]
            break
        path.append(names[0])
        cmd = subs[0]
    if not path:
        root_options = {o for param in root.params for o in param.opts}  # `ptbench --version`
        if words and all(w in root_options | {"--help"} for w in words):
            return path, []
        return path, [f"`{line}`: no command named"]
    known = {"--help", "--debug"}
    for param in cmd.params:
        known.update(param.opts)
        known.update(param.secondary_opts)
    problems = []
    for opt in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", line):
        if opt not in known:
            problems.append(f"`{line}`: `ptbench {' '.join(path)}` has no option {opt}")
    return path, problems


def layer_table(design: Path) -> list[list[str]]:
    sections = design.read_text().split("\n## Layers\n", 1)
    assert len(sections) == 2, f"{design}: no '## Layers' section"
    text = sections[1].split("\n## ", 1)[0]
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2 or cells[0] in ("layer", "") or set(cells[0]) <= {"-"}:
            continue
        rows.append(re.findall(r"`([\w.]+)`", cells[0]))
    return rows


def contract_layers() -> list[list[str]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [c for c in data["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [[m.strip().removeprefix("ptbench.") for m in layer.split("|")] for layer in contract["layers"]]


def test_docs_exist_and_readme_is_a_front_page():
    names = {p.name for p in DOCS}
    for guide in ("campaigns", "schedulers", "agents-and-sandboxes", "tasks", "integrity", "bootcamp"):
        assert f"{guide}.md" in names
    for guide in ("results", "gpu-and-cloud", "design"):
        assert f"{guide}.md" in names
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move detail into docs/"
    assert not list((ROOT / "src").rglob("README.md")), "guides live in docs/, not in the package"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_resolve(doc: Path):
    assert broken_links(doc) == []


def test_every_shown_command_exists_with_its_options():
    root = _root_command()
    problems: list[str] = []
    paths: set[tuple[str, ...]] = set()
    shown = 0
    for doc in DOCS:
        for line in shown_commands(doc):
            if re.match(r"ptbench [A-Z]", line):  # `ptbench COMMAND --help`: a placeholder
                continue
            shown += 1
            path, bad = resolve(root, line)
            problems += [f"{doc.relative_to(ROOT)}: {b}" for b in bad]
            if path:
                paths.add(tuple(path))
    assert shown > 40, "the docs show commands; the extractor found too few"
    assert problems == []
    runner = CliRunner()
    for path in sorted(paths):
        result = runner.invoke(cli_main.app, [*path, "--help"])
        assert result.exit_code == 0, f"ptbench {' '.join(path)} --help: {result.output}"


def test_layer_table_matches_the_import_contract():
    assert layer_table(ROOT / "docs" / "design.md") == contract_layers()


def test_checkers_catch_planted_mistakes(tmp_path: Path):
    (tmp_path / "other.md").write_text("# Other\n\n## A `code` heading (v0.9.1)\n")
    doc = tmp_path / "doc.md"
    doc.write_text(
        "# Doc\n\n[ok](other.md#a-code-heading-v091) [self](#doc) [web](https://example.org/x)\n"
        "[gone](missing.md) [bad anchor](other.md#nope) `[in a span](nowhere.md)`\n\n"
        "```bash\nptbench frobnicate x\nptbench status CAMPAIGN --no-such-flag\nptbench bootcamp rollout C \\\n"
        "  --shards 2 --warp 9   # a comment --not-an-option\n```\n"
    )
    assert broken_links(doc) == [
        "doc.md: missing.md: no such file",
        "doc.md: other.md#nope: no heading with anchor #nope",
    ]
    root = _root_command()
    problems = [p for line in shown_commands(doc) for p in resolve(root, line)[1]]
    assert problems == [
        "`ptbench frobnicate x`: no command `ptbench frobnicate`",
        "`ptbench status CAMPAIGN --no-such-flag`: `ptbench status` has no option --no-such-flag",
        "`ptbench bootcamp rollout C    --shards 2 --warp 9`: `ptbench bootcamp rollout` has no option --warp",
    ]
    design = tmp_path / "design.md"
    design.write_text(
        "# Design\n\n## Layers\n\n| layer | what |\n|---|---|\n| `cli` | top |\n| `core`, `spec` | bottom |\n"
    )
    assert layer_table(design) == [["cli"], ["core", "spec"]]
    assert layer_table(design) != contract_layers()
