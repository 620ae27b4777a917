"""The two image definitions, parsed with a real Singularity-definition parser (spython's Recipe
parser: apptainer itself cannot run on this machine), and their pins: the agent CLIs in the images,
in the Harbor Dockerfile twin and in scripts/install.sh equal agents/*/agent.yaml, so they cannot drift.
"""

from __future__ import annotations

import re
import shlex
import subprocess

from ptbench.agents.spec import load_agent
from ptbench.export.harbor import CLI_AGENTS, PYTHON_PACKAGES, TORCH, _templates
from tests.conftest import REPO


def recipe(path):
    from spython.main.parse.parsers import SingularityParser

    return SingularityParser(str(path)).recipe["spython-base"]


def npm_packages(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if "npm install" in line:
            out += [w for w in shlex.split(line.split("npm install", 1)[1]) if not w.startswith("-")]
    return out


def pip_requirements(lines: list[str]) -> set[str]:
    out = set()
    for line in lines:
        for part in re.split(r"&&", line):
            if "pip install" in part:
                out |= {
                    w
                    for w in shlex.split(part.split("pip install", 1)[1])
                    if not w.startswith("-") and "ptbench" not in w
                }
    return out


def drift(def_file) -> list[str]:
    """What the agent image pins differently from agents/*/agent.yaml."""
    wanted = {load_agent(a).package for a in CLI_AGENTS}
    have = set(npm_packages(recipe(def_file).install))
    return sorted(have ^ wanted)


def test_both_definitions_parse_and_say_what_they_are():
    agent, ev = recipe(REPO / "containers" / "agent.def"), recipe(REPO / "containers" / "eval.def")
    assert agent.fromHeader == ev.fromHeader == "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04"
    assert agent.labels == ["org.ptbench.image agent"] and ev.labels == ["org.ptbench.image eval"]
    assert f"torch=={TORCH}" in pip_requirements(agent.install) and f"torch=={TORCH}" in pip_requirements(ev.install)
    post = "\n".join(agent.install)
    assert "bubblewrap" in post and "fuse-overlayfs" in post
    assert {"trl>=0.20", "peft>=0.13", "vllm>=0.11"} <= pip_requirements(agent.install)


def test_agent_cli_versions_in_the_images_equal_agents_yaml():
    assert drift(REPO / "containers" / "agent.def") == []
    wanted = sorted(load_agent(a).package for a in CLI_AGENTS)
    # the Harbor twin of the agent image, and what the test install puts under .cache/npm
    dockerfile = (
        _templates()
        .get_template("agent.Dockerfile.j2")
        .render(torch=TORCH, python_packages=PYTHON_PACKAGES, clis=" ".join(wanted))
    )
    assert sorted(npm_packages(dockerfile.splitlines())) == wanted
    # the test install reads its npm pins from the agent.yaml files (python -m ptbench.agents.pins npm)
    assert "ptbench.agents.pins" in (REPO / "scripts" / "install.sh").read_text()
    # the Docker twin installs the same Python stack as the definition
    assert pip_requirements(dockerfile.splitlines()) == pip_requirements(
        recipe(REPO / "containers" / "agent.def").install
    )


def test_a_drifted_cli_version_is_caught(tmp_path):
    bad = tmp_path / "agent.def"
    bad.write_text(
        (REPO / "containers" / "agent.def").read_text().replace("@openai/codex@0.169.0", "@openai/codex@0.170.0")
    )
    assert drift(bad) == ["@openai/codex@0.169.0", "@openai/codex@0.170.0"]


def test_the_eval_image_holds_only_evaluation_and_a_read_only_ptbench():
    ev = recipe(REPO / "containers" / "eval.def")
    post = "\n".join(ev.install)
    assert "npm" not in post and "nodejs" not in post  # no agent CLIs
    assert not {"trl", "peft"} & {re.split(r"[<>=]", r)[0] for r in pip_requirements(ev.install)}
    assert (
        re.search(r'pip install "/opt/ptbench-src\[eval[^"]*\]"', post) and " -e " not in post
    )  # a package, not editable
    assert "chmod -R a-w /opt/venv/lib/python3*/site-packages/ptbench" in post
    assert ev.cmd.startswith("exec python -m ptbench eval")


def test_build_sh_refuses_a_bad_name_and_a_host_without_apptainer():
    bad = subprocess.run(["bash", "containers/build.sh", "nope"], cwd=REPO, capture_output=True, text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr
    no = subprocess.run(
        ["bash", "containers/build.sh", "eval"], cwd=REPO, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}
    )
    assert no.returncode == 2 and "apptainer is not installed" in no.stderr


def test_results_carry_the_image_digest(tmp_path, monkeypatch):
    import json

    from ptbench.core import images
    from ptbench.core.provenance import provenance

    images._digest_of.cache_clear()
    sif = tmp_path / "agent.sif"
    sif.write_bytes(b"not really an image")
    digests = tmp_path / "digests.json"
    digests.write_text(
        json.dumps(
            {"agent": {"image": "/build/host/agent.sif", "digest": "sha256:" + "ab" * 32, "bytes": sif.stat().st_size}}
        )
    )
    monkeypatch.setenv("PTBENCH_CONTAINER_DIGESTS", str(digests))
    monkeypatch.setenv("APPTAINER_CONTAINER", str(sif))
    monkeypatch.delenv("PTBENCH_CONTAINER_DIGEST", raising=False)
    assert provenance()["container_digest"] == "sha256:" + "ab" * 32  # the recorded build
    images._digest_of.cache_clear()
    sif.write_bytes(b"another image, same name")  # rebuilt, not recorded: hash the file itself
    assert provenance()["container_digest"] == images.file_digest(sif) != "sha256:" + "ab" * 32
    monkeypatch.setenv("PTBENCH_CONTAINER_DIGEST", "sha256:" + "cd" * 32)
    assert provenance()["container_digest"] == "sha256:" + "cd" * 32
