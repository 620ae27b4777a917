"""Tests mirror src (docs/design.md, "Tests mirror src"): a test file is tests/<P>/test_<m>.py or
tests/<P>/test_<m>_<topic>.py where <m> is a module or subpackage of src/ptbench/<P>/ (a private
module's name without its leading `_`) or P's own last name (the package's behaviour end to end), so
the file's first name part says what it tests. The repository-level checks, which test no module,
sit at tests/ top level and are named in TOP_LEVEL. Support modules (conftest.py, helpers without
the `test_` prefix) and the trees under tests/fixtures/ and tests/plugins/ are outside the rule."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# tests/ top level: checks of the repository as a whole, each of no one module (why it is here)
TOP_LEVEL = {
    "test_bench_scripts.py": "every scripts/bench_*.py runs at its tiny size",
    "test_container_images.py": "containers/*.def, the Harbor Dockerfile and install.sh pin the agent CLIs alike",
    "test_docs.py": "README.md and docs/ stay true to the tree and the CLI",
    "test_gate.py": "ruff and mypy, configured by pyproject.toml, refuse planted problems",
    "test_gpu_smoke_script.py": "scripts/gpu-smoke.sh and gpu-wheels.sh",
    "test_guides_check_and_agent.py": "two guides of docs/guides/ against the toy plugin package",
    "test_layers.py": "the import layers of pyproject.toml, over every module",
    "test_plugin_names.py": "no module compares against a plugin's registered name",
    "test_private_api.py": "a dependency's private name only in its private-API module",
    "test_slow_opt_in.py": "tests/conftest.py's `slow` opt-in",
    "test_stock_machine.py": "the README's install on a stock Debian/Ubuntu machine",
    "test_suite_order.py": "tests/conftest.py's order for the pytest-xdist workers",
    "test_test_layout.py": "this rule, over tests/",
}
SUPPORT_TREES = {"fixtures", "plugins"}  # data and packages the tests install, not tests of src
IMPORT = re.compile(r"^\s*(?:from|import)\s+(ptbench(?:\.\w+)+)", re.M)


def _names(package: Path, folder: tuple[str, ...]) -> set[str]:
    """What a test file's first name part may say in tests/<folder>/: a module or subpackage of the
    package (a private one's name without its `_`), or the package's own name."""
    names = {p.stem.lstrip("_") for p in package.glob("*.py") if p.name != "__init__.py"}
    names |= {p.parent.name.lstrip("_") for p in package.glob("*/__init__.py")}
    return names | set(folder[-1:])


def _beside(path: Path, src: Path) -> str:
    """Where the file should sit, read from the ptbench modules it imports (the first three, in order):
    beside a module, or in a package's folder under the package's own name."""
    places = []
    for dotted in dict.fromkeys(IMPORT.findall(path.read_text(errors="replace"))):
        parts = dotted.split(".")[1:]
        module = src.joinpath(*parts)
        if (module / "__init__.py").is_file():
            places.append("/".join(["tests", *parts, f"test_{parts[-1]}_<topic>.py"]))
        elif module.with_suffix(".py").is_file():
            places.append("/".join(["tests", *parts[:-1], f"test_{parts[-1].lstrip('_')}_<topic>.py"]))
    if not places:
        return "it imports no ptbench module below the top: name it after the package it drives end to end"
    return "beside what it imports: " + ", ".join(places[:3])


def misplaced(root: Path) -> list[str]:
    """`tests/...: what is wrong; where it should sit` for each test file under root/tests that breaks
    the rule, the package tree read from root/src/ptbench."""
    src, tests = root / "src" / "ptbench", root / "tests"
    problems, bare = [], set()
    for path in sorted(tests.rglob("test_*.py")):
        rel = path.relative_to(tests)
        folder = rel.parts[:-1]
        if folder[:1] and folder[0] in SUPPORT_TREES or (not folder and rel.name in TOP_LEVEL):
            continue
        if folder and not (path.parent / "__init__.py").is_file():
            bare.add(path.parent.relative_to(tests).as_posix())
        package = src.joinpath(*folder)
        where = "/".join(["src/ptbench", *folder])
        if not (package / "__init__.py").is_file():
            why = f"tests/{'/'.join(folder)}/ mirrors no package ({where}/ does not exist)"
        else:
            subject = rel.stem.removeprefix("test_")
            names = _names(package, folder)
            if any(subject == m or subject.startswith(m + "_") for m in names):
                continue
            why = f"its name starts with no module of {where}/ (test_<module>[_<topic>].py)"
            if not folder:
                why += " and it is not one of tests/test_test_layout.py's TOP_LEVEL checks"
        problems.append(f"tests/{rel.as_posix()}: {why}; {_beside(path, src)}")
    # Without it pytest imports a test file by its bare name, and two folders' test_x.py collide.
    return problems + [f"tests/{folder}/__init__.py: missing; add an empty one" for folder in sorted(bare)]


def test_every_test_file_sits_beside_what_it_tests() -> None:
    assert misplaced(REPO) == []


def test_the_top_level_list_names_only_real_repository_checks() -> None:
    """A stale entry (a file moved or gone) or a module's test hiding in the list fails."""
    src = REPO / "src" / "ptbench"
    for name in TOP_LEVEL:
        assert (REPO / "tests" / name).is_file(), name
        subject = name.removesuffix(".py").removeprefix("test_")
        assert not any(subject == m or subject.startswith(m + "_") for m in _names(src, ())), name


def _tree_of_names(tmp_path: Path) -> Path:
    """A copy of the repository's layout: src/ptbench itself (a link) and tests/ as empty files of the
    same names, so the rule runs on the real package and every real test file name."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ptbench").symlink_to(REPO / "src" / "ptbench")
    for path in (REPO / "tests").rglob("*.py"):
        copy = tmp_path / "tests" / path.relative_to(REPO / "tests")
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.touch()
    return tmp_path


def test_a_planted_misplaced_file_is_named_with_the_module_to_sit_beside(tmp_path: Path) -> None:
    root = _tree_of_names(tmp_path)
    assert misplaced(root) == []  # the control: the same names with nothing planted pass
    (root / "tests" / "bootcamp" / "test_game_adapters.py").write_text(
        "from ptbench.bootcamp.adapters.turns import first_case\nfrom ptbench.core.errors import UserError\n"
    )
    (root / "tests" / "gpu").mkdir()
    (root / "tests" / "gpu" / "test_gpu_trials.py").write_text("from tests.conftest import ptbench\n")
    (root / "tests" / "test_loose.py").write_text("")
    (root / "tests" / "bootcamp" / "adapters" / "__init__.py").unlink()
    (root / "tests" / "fixtures" / "test_data_not_a_test.py").write_text("")  # support tree: outside
    (root / "tests" / "bootcamp" / "helpers_of_a_test.py").write_text("")  # no test_ prefix: outside
    assert misplaced(root) == [
        "tests/bootcamp/test_game_adapters.py: its name starts with no module of src/ptbench/bootcamp/ "
        "(test_<module>[_<topic>].py); beside what it imports: tests/bootcamp/adapters/test_turns_<topic>.py, "
        "tests/core/test_errors_<topic>.py",
        "tests/gpu/test_gpu_trials.py: tests/gpu/ mirrors no package (src/ptbench/gpu/ does not exist); "
        "it imports no ptbench module below the top: name it after the package it drives end to end",
        "tests/test_loose.py: its name starts with no module of src/ptbench/ (test_<module>[_<topic>].py) "
        "and it is not one of tests/test_test_layout.py's TOP_LEVEL checks; "
        "it imports no ptbench module below the top: name it after the package it drives end to end",
        "tests/bootcamp/adapters/__init__.py: missing; add an empty one",
        "tests/gpu/__init__.py: missing; add an empty one",
    ]


def test_the_names_the_rule_allows(tmp_path: Path) -> None:
    """Each allowed form on a small package of its own: module, module + topic, private module without
    its `_`, subpackage, the package's own name; and their near misses."""
    pkg = tmp_path / "src" / "ptbench" / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for name in ("__init__.py", "mod.py", "_hidden.py", "sub/__init__.py"):
        (pkg / name).write_text("")
    tests = tmp_path / "tests" / "pkg"
    tests.mkdir(parents=True)
    (tests / "__init__.py").write_text("")
    good = ["test_mod.py", "test_mod_topic.py", "test_hidden.py", "test_sub_end_to_end.py", "test_pkg_campaign.py"]
    bad = ["test_modx.py", "test_mo.py", "test__hidden.py", "test_subs.py"]
    for name in good + bad:
        (tests / name).write_text("")
    assert [line.split(":")[0] for line in misplaced(tmp_path)] == sorted(f"tests/pkg/{name}" for name in bad)
