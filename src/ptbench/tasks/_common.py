"""What the benchmark tasks share: dataset loading with a pinned revision and a local override,
prompt formats (the model's chat template, or an explicit template file for base models), and
generation-length options.
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptbench.caches.resources import Resource
from ptbench.core.errors import UserError
from ptbench.core.generation import GenerationSettings
from ptbench.tasks.base import TaskFacts
from ptbench.tasks.protocol import token_phases

TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class DatasetPin:
    """Where a benchmark's data comes from. `revision` None means no verified commit is known yet:
    set it (a Hub commit hash) before a campaign whose numbers you publish."""

    id: str
    split: str
    config: str | None = None
    revision: str | None = None
    data_files: str | None = None

    def info(self, local: Path | None) -> dict[str, Any]:
        if local is not None:
            return {"id": self.id, "local_path": str(local)}
        return {"id": self.id, "config": self.config, "split": self.split, "revision": self.revision or "unpinned"}

    def held_out(self, patterns: tuple[str, ...] = ("*",), role: str = "test_set") -> Resource:
        """This pin as an entry of the evaluation cache's list (`TaskFacts.eval_resources`): the files of
        the repository only the evaluation may hold ("*": all of it), at the pinned revision."""
        return Resource("dataset", self.id, self.revision, patterns, role)


def local_data_path(task_name: str, data_path: str | None) -> Path | None:
    """The task option `data_path`, else `$PTBENCH_DATA_DIR/<task>` if it exists (offline clusters)."""
    if data_path:
        path = Path(data_path).expanduser()
        if not path.exists():
            raise UserError(
                f"task '{task_name}': data_path {path} does not exist (fix the path or drop the option to download)"
            )
        return path
    root = os.environ.get("PTBENCH_DATA_DIR")
    if root and (Path(root) / task_name).exists():
        return Path(root) / task_name
    return None


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows from a .jsonl/.json/.csv/.parquet file, or from every such file in a folder (sorted)."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in {".jsonl", ".json", ".csv", ".parquet"})
        if not files:
            raise UserError(f"{path}: no .jsonl/.json/.csv/.parquet data files in this folder")
        return [row for f in files for row in read_rows(f)]
    if path.suffix == ".csv":
        with open(path, newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json" and text.lstrip().startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]  # JSON lines (BFCL's .json too)


def load_rows(task_name: str, pin: DatasetPin, data_path: str | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The benchmark's rows and a description of where they came from (recorded in metrics)."""
    local = local_data_path(task_name, data_path)
    if local is not None:
        return read_rows(local), pin.info(local)
    import datasets

    kwargs: dict[str, Any] = {"split": pin.split, "revision": pin.revision}
    if pin.data_files:
        kwargs["data_files"] = pin.data_files
    try:
        ds = datasets.load_dataset(pin.id, pin.config, **kwargs)
    except Exception as exc:  # offline node, gated dataset without a token, unknown revision
        raise UserError(
            f"task '{task_name}': could not load {pin.id} ({type(exc).__name__}: {exc}); "
            f"download it where you have network and pass task option data_path or set PTBENCH_DATA_DIR"
        ) from None
    return [dict(r) for r in ds], pin.info(None)


def render_template(name: str, **values: Any) -> str:
    """Render `tasks/templates/<name>` (jinja2; base-model prompt formats live there as files)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    return env.get_template(name).render(**values)


class BenchmarkTask(TaskFacts):
    """Options every benchmark task accepts.

    prompt_format: "chat" (messages rendered with the model's own chat template) or "base" (an
    explicit completion-style template file, for base models); fewshot: worked examples in the base
    format; max_new_tokens / retry_max_new_tokens: override the task's token phases
    (`token_phases`, tasks/protocol.py).
    """

    version = "1"
    base_stop: tuple[str, ...] = ()

    def __init__(
        self,
        *,
        data_path: str | None = None,
        prompt_format: str = "chat",
        fewshot: int = 0,
        max_new_tokens: int | None = None,
        retry_max_new_tokens: list[int] | None = None,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> None:
        if prompt_format not in ("chat", "base"):
            raise TypeError("prompt_format must be 'chat' or 'base'")
        if fewshot and prompt_format != "base":
            raise TypeError("fewshot needs prompt_format 'base'")
        self.data_path = data_path
        self.prompt_format = prompt_format
        self.fewshot = int(fewshot)
        phases = token_phases(self.token_phases, max_new_tokens=max_new_tokens, retry=retry_max_new_tokens)
        self.max_new_tokens, self.retry = phases[0], phases[1:]
        self.temperature = temperature
        self.seed = seed
        self.dataset: dict[str, Any] = {}

    def train_examples(self, seed: int) -> None:
        return None  # test sets only: agents must not train on them

    def generation(self) -> GenerationSettings:
        stop = self.base_stop if self.prompt_format == "base" else ()
        return GenerationSettings(
            max_new_tokens=self.max_new_tokens, temperature=self.temperature, stop=stop, retry_max_new_tokens=self.retry
        )

    def settings_info(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "prompt_format": self.prompt_format, "fewshot": self.fewshot}

    def _prompt(self, user_text: str, base_template: str, **values: Any) -> Any:
        if self.prompt_format == "chat":
            return [{"role": "user", "content": user_text}]
        return render_template(base_template, fewshot=self.fewshot, **values)
