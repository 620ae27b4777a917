"""`ptbench collate`: read result records from one or more results folders, apply the scoring
policy, aggregate, and write the tables (Markdown, CSV, LaTeX, JSON) and plots.

Every record is validated against the schema; a file that does not validate is reported, never
silently dropped. Folders from several campaigns merge into one table when their evaluation settings
and test sets agree (else a refusal naming what differs, unless allow_mixed).
"""

from __future__ import annotations

import gc
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_text
from ptbench.core.versioned import NewerSchema
from ptbench.results.aggregate import Collation, collate
from ptbench.results.comparable import check_comparable
from ptbench.results.compare import compare as paired_compare
from ptbench.results.compare import needed, parse_pairs
from ptbench.results.compare import to_csv as comparisons_csv
from ptbench.results.cost import AgentCost, cost_table
from ptbench.results.merging import duplicate_trials, label_conflicts
from ptbench.results.plot_process import PlotProcess
from ptbench.results.policy import INTEGRITY_POLICIES, baseline_setting, check_policy, marked_label
from ptbench.results.schema import ResultRecord, read_record

if TYPE_CHECKING:
    from ptbench.spec import Campaign


@dataclass
class Loaded:
    records: list[ResultRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    trial_dirs: dict[tuple[str, str], str] = field(default_factory=dict)  # (campaign, trial id) -> folder
    campaign_specs: dict[str, dict] = field(default_factory=dict)  # campaign name -> campaign.json "spec"


def find_results(root: Path) -> list[str]:
    """Every trial's result.json under root. A folder holding trial.json or result.json is a trial (or
    baseline) folder and is not searched further: the agent's workspace lives inside its trial folder,
    and a result.json the agent wrote there must never count as a trial. Symbolic links to folders are
    not followed, and unreadable folders are skipped (as os.walk does)."""
    if root.is_file():
        return [str(root)]
    found, todo = [], [os.fspath(root)]
    while todo:  # os.scandir, not os.walk: no lstat per folder (the entry knows), a third of the time on 10,000 trials
        here = todo.pop()
        try:
            with os.scandir(here) as it:
                entries = list(it)
        except OSError:
            continue
        files = {e.name for e in entries if not _is_dir(e)}
        if "result.json" in files or "trial.json" in files:
            if "result.json" in files:
                found.append(os.path.join(here, "result.json"))
            continue
        todo += [
            e.path
            for e in entries
            if e.name != ".replaced" and not e.name.startswith(".") and _is_dir(e) and not e.is_symlink()
        ]
    return sorted(found)  # strings: 10,000 Path objects cost a noticeable part of a collation


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _read(path: str) -> bytes:
    """The file's bytes: os.read, without the buffered file object open() builds (half the time on
    10,000 small files)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


@contextmanager
def gc_paused():
    """No cyclic garbage collection inside: reading and collating 10,000 records makes hundreds of
    thousands of long-lived objects, and each full collection walks all of them again (a sixth of a
    collation) to find the few cycles, which wait for the end of the block."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def load(roots: list[Path], into: Loaded | None = None) -> Loaded:
    loaded = into or Loaded()
    for root in roots:
        if not root.exists():
            raise UserError(f"{root}: no such campaign file or results directory")
        looked: set[str] = set()
        for path in find_results(root):
            try:
                r = read_record(_read(path), where=str(path))
            except NewerSchema as exc:  # written by a newer ptbench: said as it is, never read as something else
                loaded.problems.append(str(exc))
                continue
            except (UserError, OSError) as exc:
                why = str(exc).removeprefix(f"{path}: ").splitlines()[0]
                loaded.problems.append(f"{path}: not a valid result record ({why})")
                continue
            loaded.records.append(r)
            trial_dir = os.path.dirname(path)
            loaded.trial_dirs[(r.campaign, r.trial_id)] = trial_dir
            if r.campaign in loaded.campaign_specs or os.path.dirname(trial_dir) in looked:
                continue
            looked.add(os.path.dirname(trial_dir))
            snapshot = Path(trial_dir).parent / "campaign.json"  # the plan's copy of the campaign, beside the trials
            if snapshot.is_file():
                try:
                    loaded.campaign_specs[r.campaign] = json.loads(snapshot.read_text()).get("spec", {})
                except (json.JSONDecodeError, AttributeError):
                    loaded.problems.append(f"{snapshot}: not valid JSON; its scoring policy is not known")
    return loaded


def load_records(root: Path) -> tuple[list[ResultRecord], list[str]]:
    loaded = load([root])
    return loaded.records, loaded.problems


def policies(loaded: Loaded, override: str | None) -> tuple[str, str | None]:
    """(scoring policy, integrity policy or None) from the campaign snapshots, or `--policy`."""
    campaigns = sorted({r.campaign for r in loaded.records if baseline_setting(r) is None})
    found: dict[str, tuple[str, str | None]] = {}
    for name in campaigns:
        spec = loaded.campaign_specs.get(name, {})
        scoring = (spec.get("scoring") or {}).get("policy", "base_fallback")
        integrity = spec.get("integrity")
        integrity = integrity.get("policy") if isinstance(integrity, dict) else None
        found[name] = (
            check_policy(scoring, f"campaign {name}: scoring.policy"),
            check_policy(integrity, f"campaign {name}: integrity.policy", INTEGRITY_POLICIES) if integrity else None,
        )
    integrity_policies = {p[1] for p in found.values()}
    if override:
        check_policy(override, "--policy")
    elif len({p[0] for p in found.values()}) > 1:
        raise UserError(
            "the campaigns use different scoring policies ("
            + ", ".join(f"{n}: {p[0]}" for n, p in found.items())
            + "); pass --policy base_fallback|exclude|nan to choose one"
        )
    if len(integrity_policies) > 1:
        raise UserError(
            "the campaigns use different integrity policies ("
            + ", ".join(f"{n}: {p[1]}" for n, p in found.items())
            + ")"
        )
    scoring = override or next(iter({p[0] for p in found.values()}), "base_fallback")
    return scoring, next(iter(integrity_policies), None)


def default_baselines(roots: list[Path]) -> list[Path]:
    """`ptbench baseline` writes to results/baselines by default: beside a campaign's folder."""
    out = []
    for root in roots:
        sibling = root.resolve().parent / "baselines"
        if (
            (root / "campaign.json").is_file()
            and sibling.is_dir()
            and sibling.resolve() not in {r.resolve() for r in roots}
        ):
            out.append(sibling)
    return sorted(set(out))


@dataclass
class Collated:
    collation: Collation
    costs: list[AgentCost]
    loaded: Loaded
    warnings: list[str]


def collate_dirs(
    targets: list[Path],
    *,
    policy: str | None = None,
    weights: str = "auto",
    baselines: list[Path] | None = None,
    allow_mixed: bool = False,
    compare: list[str] | None = None,
    ci: bool = False,
    seeds_width: float | None = None,
) -> Collated:
    if not targets:
        raise UserError("collate: name at least one results folder or campaign file")
    loaded = load(targets)
    extra = default_baselines(targets) if baselines is None else baselines
    if extra:
        load(extra, into=loaded)
    if not loaded.records:
        hint = "".join(rehearsal_hint(t, "collate") for t in targets[:1])
        raise UserError(
            f"{', '.join(map(str, targets))}: no result.json found (run the campaign first, or point at its results "
            f"folder){hint}"
        )
    warnings = list(loaded.problems) + label_conflicts(loaded.records) + duplicate_trials(loaded.records)
    for r in loaded.records:  # every table, plot and report row says when an agent ran unsandboxed
        r.agent.label = marked_label(r)
    if extra:
        warnings.append(f"baseline records read from {', '.join(map(str, extra))}")
    # the one comparability check (issue 11b's): raises unless allow_mixed, else returns warnings
    warnings += [
        f"mixed evaluation (--allow-mixed): {d}" for d in check_comparable(loaded.records, allow_mixed=allow_mixed)
    ]
    scoring, integrity = policies(loaded, policy)
    c = collate(loaded.records, scoring, integrity, weights)
    if compare:
        c.comparisons = paired_compare(c, parse_pairs(compare, c.agents), loaded.trial_dirs)
    c.ci = ci
    if seeds_width is not None:
        if seeds_width <= 0:
            raise UserError(f"--seeds-needed {seeds_width:g}: give the CI width you want in points, e.g. 5")
        c.seeds_width, c.seeds_needed = seeds_width, needed(c, c.comparisons, seeds_width)
    missing = sorted({(t.record.base_model.label, t.record.task.label) for t in c.trials if t.rule == "no_baseline"})
    if missing:
        warnings.append(
            "no base zero-shot score for "
            + ", ".join(f"{b} on {t}" for b, t in missing)
            + ": those trials count as nan (run `ptbench baseline --kind base` or pass --baselines DIR)"
        )
    return Collated(c, cost_table(loaded.records, loaded.trial_dirs), loaded, warnings)


def write_outputs(
    result: Collated, out: Path, plots: bool = True, plotter: PlotProcess | None = None
) -> tuple[str, list[Path]]:
    """Every format into `out`; returns the Markdown (for the screen) and the files written. With a
    `plotter` (see plot_process), the plots are drawn there while the tables are written."""
    from ptbench.results import latex, tables
    from ptbench.results.plots import write_plots

    c, costs = result.collation, result.costs
    out.mkdir(parents=True, exist_ok=True)
    if plots and plotter:
        plotter.send(c, costs, out)
    md = tables.to_markdown(c, costs)
    texts = {
        "results.md": md + "\n",
        "results.csv": tables.to_csv(c),
        "results.tex": latex.to_latex(c),
        "results.json": json.dumps(tables.to_json(c, costs), allow_nan=False)
        + "\n",  # no indent: the C encoder, 10x faster
        "cost.csv": tables.cost_csv(costs),
        **({"comparisons.csv": comparisons_csv(c.comparisons)} if c.comparisons else {}),
    }
    files = []
    for name, text in texts.items():
        atomic_write_text(out / name, text)
        files.append(out / name)
    if plots:
        files += plotter.wait() if plotter else write_plots(c, costs, out)
    return md, files


def resolve_campaign_dir(target: str, *, rehearse: bool = False) -> tuple[Path, Campaign | None]:
    """A campaign file -> its results folder; a folder is taken as it is. `rehearse`: the folder of the
    campaign's rehearsal (`run --rehearse` writes to `<name>-rehearsal` beside it)."""
    path = Path(target)
    if rehearse and not path.is_file() and rehearsal_dir(path.resolve()).is_dir():
        return rehearsal_dir(path.resolve()), None  # only the rehearsal ran: the real folder may not exist
    if path.is_file():
        from ptbench.spec import load_campaign  # only for a campaign file: a tenth of a second of `ptbench collate DIR`

        campaign = load_campaign(path)
        return (rehearsal_dir(campaign.campaign_dir) if rehearse else campaign.campaign_dir), campaign
    if path.is_dir():
        return (rehearsal_dir(path.resolve()) if rehearse else path.resolve()), None
    raise UserError(f"{target}: no such campaign file or results directory")


def rehearsal_dir(campaign_dir: Path) -> Path:
    """Where `run --rehearse` put the campaign's trials: `<name>-rehearsal` beside its results folder."""
    from ptbench.spec.campaign import REHEARSAL_SUFFIX

    name = campaign_dir.name
    return campaign_dir if name.endswith(REHEARSAL_SUFFIX) else campaign_dir.with_name(name + REHEARSAL_SUFFIX)


def rehearsal_hint(campaign_dir: Path, command: str) -> str:
    """'; only a rehearsal ran here: ...' when the rehearsal's folder has trials ('' otherwise): after
    `run --rehearse`, `status CAMPAIGN` and `collate CAMPAIGN` look where the real run would write."""
    other = rehearsal_dir(campaign_dir)
    if other == campaign_dir or not any(other.glob("*/trial.json")):
        return ""
    return f"; a rehearsal ran ({other}): `ptbench {command} --rehearse {campaign_dir}` shows it"


def write_tables(
    target: str | list[str], out_dir: str | None, plots: bool = True, **options
) -> tuple[str, list[Path], list[str]]:
    """Collate one or more campaigns (see `collate_dirs` for `options`) into `out_dir`
    (default: <first campaign>/tables); returns the Markdown, the files written, the warnings (and
    a line for each figure not drawn for want of data)."""
    # forked first, so that matplotlib's import in the child overlaps the reading of the records
    plotter = PlotProcess.start() if plots else None
    try:
        roots = [resolve_campaign_dir(t)[0] for t in ([target] if isinstance(target, str) else target)]
        with gc_paused():  # after the fork: the plot child collects its figures' cycles as usual
            result = collate_dirs(roots, **options)
            md, files = write_outputs(
                result, Path(out_dir) if out_dir else roots[0] / "tables", plots=plots, plotter=plotter
            )
    finally:
        if plotter:
            plotter.close()
    if plots:  # a figure left out for want of data is said, once, beside the warnings
        from ptbench.results.plots import not_drawn

        return md, files, result.warnings + not_drawn(result.collation, result.costs)
    return md, files, result.warnings
