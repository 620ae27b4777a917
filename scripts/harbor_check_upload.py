"""Re-materializes an exported task's artifacts the way Harbor's verifier does, with harbor's own
ArtifactHandler.upload_artifacts, into a folder standing in for the verifier container.

Run with the Harbor venv's interpreter (harbor needs Python >= 3.12):
    .venv-harbor/bin/python scripts/harbor_check_upload.py TASK_DIR HOST_ARTIFACTS CONTAINER_ROOT [--reverse]

HOST_ARTIFACTS is what Harbor collected from the agent's container (artifacts/<destination or
source path>); CONTAINER_ROOT/<path> stands for <path> in the verifier container. Containers
cannot run here, so the environment is the seam: its empty_dirs/upload_dir/upload_file act on
CONTAINER_ROOT as Harbor's Docker environment acts on the container. `--reverse` uploads the
artifacts in the opposite order (what the exporter wrote before). Prints the files that landed.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
from pathlib import Path

from harbor.models.task.task import Task
from harbor.trial.artifact_handler import ArtifactHandler


class FolderEnvironment:
    """The verifier container as a folder: the calls upload_artifacts makes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _at(self, path) -> Path:
        return self.root / str(path).lstrip("/")

    async def empty_dirs(self, dirs, *, chmod: bool = True):
        for d in dirs:  # as harbor's `_empty_dirs_command`: the folder exists and is empty
            target = self._at(d)
            if target.exists():
                shutil.rmtree(target)
            target.mkdir(parents=True)

    async def ensure_dirs(self, dirs, *, chmod: bool = True):
        for d in dirs:
            self._at(d).mkdir(parents=True, exist_ok=True)

    async def upload_dir(self, source_dir, target_dir):
        shutil.copytree(source_dir, self._at(target_dir), dirs_exist_ok=True)

    async def upload_file(self, source_path, target_path):
        shutil.copy2(source_path, self._at(target_path))


def main(argv: list[str]) -> int:
    task_dir, host, root = (Path(a) for a in argv[:3])
    artifacts = list(Task(task_dir).config.artifacts)
    if "--reverse" in argv:
        artifacts.reverse()
    handler = ArtifactHandler(artifacts=artifacts, logger=logging.getLogger("upload"))
    asyncio.run(
        handler.upload_artifacts(
            FolderEnvironment(root),
            host,
            source_artifacts_dir="/logs/artifacts",
            target_artifacts_dir="/logs/artifacts",
        )
    )
    for p in sorted(root.rglob("*")):
        if p.is_file():
            print(p.relative_to(root).as_posix())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
