"""The `base-model` agent: put the base model, unchanged, into final_model/."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--base-model", required=True)
    p.add_argument("--revision", default="")
    p.add_argument("--output", default="final_model")
    args = p.parse_args(argv)
    src = Path(args.base_model)
    if not src.is_dir():
        from huggingface_hub import snapshot_download

        src = Path(snapshot_download(args.base_model, revision=args.revision or None))
    out = Path(args.output)
    tmp = out.with_name(out.name + ".partial")
    shutil.copytree(src, tmp, ignore=shutil.ignore_patterns(".git", "*.partial"), dirs_exist_ok=True)
    tmp.replace(out)
    print(f"copied {src} -> {out}")


if __name__ == "__main__":
    main()
