"""`ptbench report` opened in a real headless Chromium (Debian's chromium driven by Playwright), on a
copy of the site whose results folder is gone: pages load without console errors, the trial table
comes before the plots, an agent has one colour in every figure and on the page, no figure is drawn
without data, every link and image resolves inside the copied site, a trajectory renders its tool
calls, and what a hostile agent wrote (its trajectory, a symlink among its raw files) stays inert.
Screenshots are compared by their element boxes, never by pixels."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from ptbench.results import plots
from tests.conftest import ptbench
from tests.results import synthetic
from tests.results.browser import chromium, drawn_colors, watch_errors

SECRET = "SECRET-OUTSIDE-THE-TRIAL-7f3a"
SCRIPT = "<script>window.__pwned = 1</script>"
IMG = '"><img src=x onerror="window.__pwned = 2">'


def hostile_trial(trial: Path) -> None:
    (trial / "agent").mkdir(parents=True)
    (trial / "agent" / "trajectory.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "agent": "x",
                "trace_format": "t",
                "steps": [
                    {"index": 0, "kind": "message", "text": f"I will now {SCRIPT} win"},
                    {
                        "index": 1,
                        "kind": "tool_call",
                        "tool_call": {
                            "name": "Bash",
                            "arguments": {"command": f"echo '{IMG}'"},
                            "output": "line\n" * 2000,
                            "status": "ok",
                            "exit_code": 0,
                        },
                    },
                    {
                        "index": 2,
                        "kind": "tool_call",
                        "tool_call": {"name": "Write<b>bold</b>", "arguments": {"path": "train.py"}, "status": "error"},
                    },
                ],
            }
        )
    )
    (trial / "eval").mkdir()
    (trial / "eval" / "samples.jsonl").write_text(
        json.dumps({"id": "q1", "reference": "4", "completion": "<iframe src=x></iframe>4", "score": 1.0}) + "\n"
    )
    (trial / "checks").mkdir()
    (trial / "checks" / "contamination.json").write_text(
        json.dumps(
            {
                "verdict": "flagged",
                "reason": "trained on test questions",
                "evidence": ["data/train.jsonl:12 matches test id q1 </td><script>x()</script>"],
            }
        )
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """The report of the synthetic campaign (a hostile trial among it), then the site copied elsewhere
    and the results folder and the original site deleted, as a user mailing the site would."""
    root = tmp_path_factory.mktemp("report")
    cdir = synthetic.write(root / "results")
    hostile_trial(cdir / "x__B__aime2025__s0")  # the flagged trial
    (root / "secret.txt").write_text(SECRET)
    planted = cdir / "x__A__gsm8k__s0" / "agent"
    planted.mkdir()
    (planted / "native.log").symlink_to(root / "secret.txt")  # a raw file that is a link out of the trial
    (cdir / "x__A__gsm8k__s1" / "agent").mkdir()
    (cdir / "x__A__gsm8k__s1" / "agent" / "native.log").write_text("step 1 loss 0.5\n")
    run = ptbench("report", str(cdir), "--out", str(root / "site"), timeout=300)
    assert run.returncode == 0, run.stderr
    raw = root / "site" / "raw" / "c1__x__A__gsm8k__s1"
    facts = {
        # same filesystem: the raw file is a hard link (no bytes copied), not a path into results/
        "hard_linked": os.stat(raw / "result.json").st_ino == os.stat(cdir / "x__A__gsm8k__s1" / "result.json").st_ino,
        "planted_copied": (root / "site" / "raw" / "c1__x__A__gsm8k__s0" / "agent" / "native.log").exists(),
    }
    moved = tmp_path_factory.mktemp("elsewhere") / "site"
    shutil.copytree(root / "site", moved)
    shutil.rmtree(root / "results")
    shutil.rmtree(root / "site")
    (root / "secret.txt").unlink()
    return {"site": moved, **facts}


@pytest.fixture(scope="module")
def site(built) -> Path:
    return built["site"]


def test_report_is_escaped_in_the_html(site):
    page = (site / "trials" / "c1__x__B__aime2025__s0.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert "<img src=x" not in page and "<iframe" not in page and "Write&lt;b&gt;bold&lt;/b&gt;" in page
    assert "script-src" not in page and "default-src 'none'" in page  # scripts forbidden outright
    index = (site / "index.html").read_text()
    assert "http://" not in index and "https://" not in index  # nothing to fetch: works offline
    assert "<script" not in index  # the static site has no script; only `ptbench view` adds one


def test_raw_files_are_in_the_site_and_a_planted_link_is_not_followed(built, site):
    assert built["hard_linked"]
    assert not built["planted_copied"]  # the symlink to a file outside the trial was left out
    honest = site / "raw" / "c1__x__A__gsm8k__s1" / "agent" / "native.log"
    assert honest.read_text() == "step 1 loss 0.5\n"  # control: a real log is there
    assert not any(p.is_symlink() for p in site.rglob("*"))
    assert not any(SECRET in p.read_text(errors="replace") for p in site.rglob("*") if p.is_file())
    page = (site / "trials" / "c1__x__A__gsm8k__s0.html").read_text()
    assert (
        "agent/native.log" not in page
        and "agent/native.log" in (site / "trials" / "c1__x__A__gsm8k__s1.html").read_text()
    )


def _inside(url: str, site: Path) -> Path:
    """The file a link of the site names; fails unless it is a file:// path inside `site` that exists."""
    parsed = urlparse(url)
    assert parsed.scheme == "file", url
    path = Path(unquote(parsed.path))
    assert path.resolve().is_relative_to(site.resolve()), f"{url} points outside the site"
    assert path.is_file(), f"{url}: no such file in the copied site"
    return path


LINKS = "() => [...document.querySelectorAll('a[href]')].map(e => e.href).concat([...document.images].map(i => i.src))"


@pytest.mark.slow  # a browser, several pages
def test_every_link_resolves_in_the_copied_site(site):
    errors: list[str] = []
    with chromium() as browser:
        page = browser.new_page()
        watch_errors(page, errors)
        page.goto((site / "index.html").as_uri())
        trial_pages = page.locator("#trials a").evaluate_all("els => els.map(e => e.href)")
        assert len(trial_pages) == len(synthetic.TRIALS)
        checked = 0
        for url in [(site / "index.html").as_uri(), *trial_pages]:
            page.goto(url)
            assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")
            for ref in page.evaluate(LINKS):
                _inside(ref.split("#", 1)[0], site)
                checked += 1
        # the index's trial links, figures and PDFs; each trial page's link back and raw result.json at least
        assert checked >= len(trial_pages) + 2 * len(plots.FIGURES) + 2 * len(trial_pages)
        page.goto((site / "trials" / "c1__x__B__aime2025__s0.html").as_uri())
        raw = page.locator("a", has_text="agent/trajectory.json").get_attribute("href")
        page.goto(page.url.rsplit("/", 1)[0] + "/" + raw)
        assert '"steps"' in page.content()
    assert errors == []


def test_report_in_headless_chromium(site):
    errors: list[str] = []
    with chromium() as browser:
        page = browser.new_page()
        watch_errors(page, errors)
        page.goto((site / "index.html").as_uri())
        assert page.locator("#benchmarks tr").count() == 1 + 2 + 3  # header, agents x and y, three baseline rows
        assert page.evaluate("document.images.length") == 4
        assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")
        links = page.locator("#trials a").evaluate_all("els => els.map(e => e.href)")
        for href in links:
            page.goto(href)
            assert page.locator("h1").inner_text().strip() in href
        page.goto((site / "trials" / "c1__x__B__aime2025__s0.html").as_uri())
        assert page.locator("#trajectory .tool-name").all_inner_texts() == ["Bash", "Write<b>bold</b>"]
        assert (
            SCRIPT in page.locator("#trajectory").inner_text()
            and "<img src=x onerror=" in page.locator("#trajectory").inner_text()
        )
        assert page.evaluate("window.__pwned") is None  # nothing the agent wrote ran
        assert page.locator("#trajectory details").count() == 1  # the long output hides behind an expander
        assert "trained on test questions" in page.locator("#integrity").inner_text()
        assert page.locator("#samples iframe").count() == 0 and "<iframe" in page.locator("#samples").inner_text()
    assert errors == []


BOXES = """() => {
  const box = e => { const r = e.getBoundingClientRect();
    return {x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height}; };
  const first = document.querySelector('figure.plot');
  return {
    headings: [...document.querySelectorAll('h2')].map(h => [h.textContent, box(h)]),
    trials: box(document.querySelector('#trials').parentElement),
    trialsBeforePlot: !!(document.querySelector('#trials').compareDocumentPosition(first)
                         & Node.DOCUMENT_POSITION_FOLLOWING),
    figures: [...document.querySelectorAll('figure.plot')].map(f => ({
      id: f.id, box: box(f), img: box(f.querySelector('img')), natural: f.querySelector('img').naturalWidth})),
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: innerWidth,
  };
}"""


def _overlap(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]
    )


def _hex(css: str) -> str:
    r, g, b = (int(v) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


@pytest.mark.slow  # a browser, several pages
def test_trials_come_first_plots_are_small_and_each_agent_has_one_colour(site, tmp_path):
    shots = tmp_path / "screenshots"
    layouts = {}
    with chromium() as browser:
        for width in (1280, 760):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto((site / "index.html").as_uri())
            page.screenshot(path=str(shots / f"index-{width}.png"), full_page=True)
            layouts[width] = layout = page.evaluate(BOXES)
            assert layout["trialsBeforePlot"]
            top_of_plots = min(f["box"]["y"] for f in layout["figures"])
            assert layout["trials"]["y"] + layout["trials"]["h"] <= top_of_plots  # trials above, in view order too
            ys = [b["y"] for _, b in layout["headings"]]
            assert ys == sorted(ys) and len(set(ys)) == len(ys)  # sections stacked in document order
            assert layout["scrollWidth"] <= layout["innerWidth"]  # nothing wider than the window
            for i, f in enumerate(layout["figures"]):
                assert f["box"]["x"] >= 0 and f["box"]["x"] + f["box"]["w"] <= layout["innerWidth"]
                assert f["img"]["w"] <= f["natural"] * 2 / 3 + 1  # smaller than drawn: 100 px per inch at most
                assert not any(_overlap(f["box"], g["box"]) for g in layout["figures"][i + 1 :])
            plots_heading = next(b for t, b in layout["headings"] if t == "Plots")
            bottom = max(f["box"]["y"] + f["box"]["h"] for f in layout["figures"])
            if width == 1280:
                assert bottom - plots_heading["y"] < 1000  # the four figures in two rows, not 2,500 px
            # one colour per agent: the legend, the trial table's swatches and every figure's artists
            legend = dict(
                page.evaluate(
                    "[...document.querySelectorAll('.agent-color')].map(e => [e.dataset.agent, e.dataset.color])"
                )
            )
            assert legend == plots.agent_colors(["x", "y"])
            swatches = page.evaluate(
                "[...document.querySelectorAll('#trials tr')].slice(1).map(r => [r.cells[1].innerText.trim(), "
                "getComputedStyle(r.cells[1].querySelector('.swatch')).backgroundColor])"
            )
            assert {agent: _hex(css) for agent, css in swatches} == legend and len(swatches) == len(synthetic.TRIALS)
            for src in page.evaluate("[...document.images].map(i => i.src)"):
                drawn = drawn_colors(_inside(src, site))
                assert drawn and all(colors == [legend[agent]] for agent, colors in drawn.items()), (src, drawn)
            page.close()
    assert sorted(p.name for p in shots.iterdir()) == ["index-1280.png", "index-760.png"]
    # the same structure at both widths: the same sections in the same order, the same figures
    assert [t for t, _ in layouts[1280]["headings"]] == [t for t, _ in layouts[760]["headings"]]
    assert [f["id"] for f in layouts[1280]["figures"]] == [f["id"] for f in layouts[760]["figures"]]


@pytest.mark.slow  # a browser, several pages
def test_no_figure_for_empty_data(tmp_path):
    no_cost = {"input_tokens": 10, "output_tokens": 1}
    trials = [synthetic.record(a, "A", t, 0, 0.0, usage=no_cost) for a in ("x", "y") for t in ("gsm8k", "aime2025")]
    cdir = synthetic.write(tmp_path / "results", trials)
    run = ptbench("report", str(cdir), "--out", str(tmp_path / "site"), timeout=300)
    assert run.returncode == 0, run.stderr
    with chromium() as browser:
        page = browser.new_page()
        page.goto((tmp_path / "site" / "index.html").as_uri())
        assert page.locator("figure.plot").evaluate_all("els => els.map(e => e.id)") == [
            "plot-benchmarks",
            "plot-aggregate",
            "plot-score_vs_time",
        ]
        assert page.locator(".plot-note").all_inner_texts() == ["score vs cost: not drawn (no agent reported a cost)"]
        assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")
    assert not (tmp_path / "site" / "plots" / "score_vs_cost.png").exists()
