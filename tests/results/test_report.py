"""`ptbench report` opened in a real headless Chromium (Debian's chromium driven by Playwright):
pages load without console errors, the trial table links to every trial page, a trajectory renders
its tool calls, and what a hostile agent wrote into its trajectory stays inert text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import ptbench
from tests.results import synthetic
from tests.support import require

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
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
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("report")
    cdir = synthetic.write(root / "results")
    hostile_trial(cdir / "x__B__aime2025__s0")  # the flagged trial
    run = ptbench("report", str(cdir), "--out", str(root / "site"), timeout=180)
    assert run.returncode == 0, run.stderr
    return root / "site"


def test_report_is_escaped_in_the_html(site):
    page = (site / "trials" / "c1__x__B__aime2025__s0.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert "<img src=x" not in page and "<iframe" not in page and "Write&lt;b&gt;bold&lt;/b&gt;" in page
    assert "script-src" not in page and "default-src 'none'" in page  # scripts forbidden outright
    index = (site / "index.html").read_text()
    assert "http://" not in index and "https://" not in index  # nothing to fetch: works offline


def test_report_in_headless_chromium(site):
    require(
        Path(CHROMIUM).exists() and shutil.which("chromium") is not None,
        "chromium missing (bash scripts/install.sh test installs Debian's chromium)",
    )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "playwright missing (bash scripts/install.sh test installs it)")
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
            page.goto((site / "index.html").as_uri())
            assert page.locator("#benchmarks tr").count() == 1 + 2 + 3  # header, agents x and y, three baseline rows
            assert page.evaluate("document.images.length") == 4
            assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")
            links = page.locator("#trials a").evaluate_all("els => els.map(e => e.href)")
            assert len(links) == len(synthetic.TRIALS)
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
            raw = page.locator("a", has_text="agent/trajectory.json").get_attribute("href")
            page.goto(page.url.rsplit("/", 1)[0] + "/" + raw)
            assert '"steps"' in page.content()
        finally:
            browser.close()
    assert errors == []
