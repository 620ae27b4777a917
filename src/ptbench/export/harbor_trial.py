"""The Harbor verifier's own trial directory and reference models.

The integrity checks and the evaluation read a trial directory (ptbench.trial.TrialDir). The
verifier builds one in a folder of its own, outside everything the agent left:

    <work>/trial/
      trial.json     the task's tests/trial.json (trusted: Harbor copies tests/ in only now)
      workspace/     links to every entry of the agent's workspace except final_model/ (the
                     runner's collect stage moves final_model/ out of the workspace too)
      final_model    a link to the agent's final_model/, once it passed `model_problem`
      home/ agent/   empty: a Harbor verifier receives neither the agent's HOME nor its trajectory
      checks/ eval/  written by the checks and the evaluation

The base model, its instruct versions and the campaign's forbidden hub models are looked up in the
verifier's own models cache (HF hub layout), downloaded there at the pinned revision if missing and
online. The agent's workspace is never searched for a model, a test set or a setting.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ptbench.integrity.model_identity import INSTRUCT_OF, find_model
from ptbench.trial import TrialDir, TrialSpec

# Only what the checks and the evaluation read of a model.
_MODEL_FILES = ["*.json", "*.safetensors", "*.model", "*.txt", "*.jinja", "tokenizer*"]


def model_problem(model: Path) -> str | None:
    """Why the agent's final_model cannot be trusted as a model folder, or None."""
    if model.is_symlink():
        return "final_model is a link (it must be the folder the agent wrote)"
    if not model.is_dir() or not any(model.iterdir()):
        return "no final_model/"
    root = model.resolve()
    for p in model.rglob("*"):
        if p.is_symlink() and not p.resolve().is_relative_to(root):
            return f"{p.relative_to(model)} links outside final_model/"
    return None


def build_trial(root: Path, tests: Path, model: Path, workspace: Path) -> tuple[TrialDir, str | None]:
    """The verifier's trial directory; returns it and why final_model is unusable (None if usable)."""
    spec = TrialSpec.read(tests / "trial.json")
    if root.exists():
        shutil.rmtree(root)
    for d in ("workspace", "home", "agent", "checks", "eval"):
        (root / d).mkdir(parents=True)
    (root / "trial.json").write_text(spec.model_dump_json(indent=2))
    if workspace.is_dir() and not workspace.is_symlink():
        skip = {model.resolve()} if model.exists() else set()
        for entry in sorted(workspace.iterdir()):
            if entry.name == "final_model" or entry.resolve() in skip:
                continue
            (root / "workspace" / entry.name).symlink_to(workspace.absolute() / entry.name)
    problem = model_problem(model)
    if problem is None:
        (root / "final_model").symlink_to(model.resolve(), target_is_directory=True)
    return TrialDir(root), problem


def reference_models(spec: TrialSpec) -> list[tuple[str, str | None]]:
    """(hub id, revision) of the models the checks compare with: the base, its instruct versions,
    and the campaign's forbidden models that are hub ids (a local folder of the exporting machine
    does not exist here; model_identity then reports it missing)."""
    refs: list[tuple[str, str | None]] = [(spec.base_model.id, spec.base_model.revision)]
    refs += [(m, None) for m in INSTRUCT_OF.get(spec.base_model.id, [])]
    refs += [(m, None) for m in spec.integrity.forbidden_models if "/" in m and not m.startswith(("/", ".", "~"))]
    return refs


def fetch_references(spec: TrialSpec, models: Path) -> dict[str, str]:
    """Make every reference model present in `models` (HF_HOME-like: models/hub/models--…).
    Returns {hub id: what happened}; a model that cannot be had is left to the checks to report."""
    out: dict[str, str] = {}
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
    for ref, revision in reference_models(spec):
        found = find_model(ref, [models])
        pinned = revision is not None and len(revision) == 40  # a full commit names its snapshot folder
        if found is not None and (not pinned or found.name == revision):
            out[ref] = f"in the verifier's cache ({found.name})"
            continue
        if offline:
            out[ref] = (
                f"revision {revision} missing, found {found.name} (HF_HUB_OFFLINE)"
                if found
                else "missing (HF_HUB_OFFLINE)"
            )
            continue
        try:
            from huggingface_hub import snapshot_download

            path = snapshot_download(ref, revision=revision, cache_dir=str(models / "hub"), allow_patterns=_MODEL_FILES)
            out[ref] = f"downloaded ({Path(path).name})"
        except Exception as exc:  # noqa: BLE001  (a gated, renamed or unreachable model: the checks say unchecked)
            out[ref] = f"missing ({type(exc).__name__}: {str(exc)[:200]})"
    return out


def main(argv: list[str]) -> int:
    """`python -m ptbench.export.harbor_trial TRIAL_JSON MODELS`: fetch the references (the
    verifier image's build step, so verification does not wait for downloads)."""
    spec = TrialSpec.read(Path(argv[0]))
    for ref, what in fetch_references(spec, Path(argv[1])).items():
        print(f"{ref}: {what}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
