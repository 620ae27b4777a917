"""`ptbench view`: the real command serving a results folder, loaded in a real headless Chromium. A
trial result added on disk while the page is open shows on it after the rebuild, without a click;
the page's one script runs (allowed by its hash) while agent-written text still cannot; Ctrl-C stops
the server and removes what it built; a folder that is not a campaign's results is one line, exit 2."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ptbench
from tests.results import synthetic
from tests.results.browser import chromium, watch_errors
from tests.results.test_report import hostile_trial

REPO = Path(__file__).resolve().parents[2]


def _start(cdir: Path, tmp: Path) -> tuple[subprocess.Popen, str, Path]:
    out = tmp / "view.out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ptbench", "view", str(cdir), "--port", "0", "--interval", "0.5"],
        stdout=out.open("w"),
        stderr=subprocess.STDOUT,
        env={**os.environ, "TMPDIR": str(tmp)},  # where the viewer's sites go: the test sees them go
    )
    deadline = time.monotonic() + 240  # the first build imports matplotlib and draws on a busy machine
    while time.monotonic() < deadline:
        found = re.search(r"at (http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]{20,}/) ", out.read_text())
        if found:
            return proc, found.group(1), out
        assert proc.poll() is None, out.read_text()
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"ptbench view did not start: {out.read_text()}")


@pytest.mark.slow
def test_view_serves_the_report_and_shows_a_new_trial_after_the_refresh(tmp_path):
    cdir = synthetic.write(tmp_path / "results", synthetic.TRIALS[:-1])  # the last trial is still running
    hostile_trial(cdir / "x__B__aime2025__s0")
    sites = tmp_path / "tmp"
    sites.mkdir()
    proc, url, out = _start(cdir, sites)
    errors: list[str] = []
    try:
        assert url.startswith("http://127.0.0.1:")
        # without the secret path printed to the user, nothing: not the index, a page, a raw file, the version
        root = url.rsplit("/", 2)[0] + "/"
        for path in ["", "index.html", "raw/c1__x__B__aime2025__s0/result.json", "__ptbench__/version", "trials/"]:
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(root + path, timeout=30)
            assert refused.value.code == 404, path
        with urllib.request.urlopen(url + "__ptbench__/version", timeout=30) as ok:  # control: with it, served
            assert ok.read() == b"1"
        assert url.split("/")[-2] not in "".join(p.read_text() for p in sites.rglob("*.html"))  # in no file
        with chromium() as browser:
            from playwright.sync_api import expect  # chromium() made sure playwright is there

            page = browser.new_page()
            watch_errors(page, errors)
            page.goto(url)
            rows = page.locator("#trials tr")
            assert rows.count() == 1 + len(synthetic.TRIALS) - 1
            version = page.locator('meta[name="ptbench-version"]').get_attribute("content")
            last = synthetic.TRIALS[-1]
            (cdir / last["trial_id"]).mkdir()
            (cdir / last["trial_id"] / "result.json").write_text(json.dumps(last))
            # no goto, no click: the page's own poll sees the new build and reloads
            expect(rows).to_have_count(1 + len(synthetic.TRIALS), timeout=180_000)
            assert page.locator('meta[name="ptbench-version"]').get_attribute("content") != version
            assert last["trial_id"] in page.locator("#trials").inner_text()
            assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")
            page.goto(url + "trials/c1__x__B__aime2025__s0.html")  # the hostile trial, served live
            page.wait_for_timeout(1500)  # the page's poll has run at least once
            assert page.evaluate("window.__pwned") is None  # the hash admits our script, not the agent's text
            raw = page.locator("a", has_text="agent/trajectory.json").get_attribute("href")
            response = page.goto(page.url.rsplit("/", 1)[0] + "/" + raw)
            assert response is not None and response.headers["x-content-type-options"] == "nosniff"
        assert list(sites.glob("ptbench-view-*"))  # the served sites live in the temporary folder...
        assert not (cdir / "report").exists()  # ...not in the results folder
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        rc = proc.wait(60)
    assert rc == 0, out.read_text()
    assert out.read_text().splitlines()[-1] == "stopped"
    assert not list(sites.glob("ptbench-view-*"))  # nothing left behind
    assert errors == []  # no CSP violation, no script error


def test_view_refuses_a_folder_that_is_not_a_campaigns_results(tmp_path):
    synthetic.write(tmp_path / "results")
    for target, said in [
        (tmp_path / "results", "not a campaign results folder"),  # the parent of the campaigns
        (tmp_path / "nope", "no such folder"),
    ]:
        run = ptbench("view", str(target), "--port", "0", timeout=60)
        assert run.returncode == 2
        assert len(run.stderr.strip().splitlines()) == 1 and said in run.stderr and str(target) in run.stderr


def test_view_says_a_taken_port_in_one_line(tmp_path):
    import socket

    cdir = synthetic.write(tmp_path / "results")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        run = ptbench("view", str(cdir), "--port", str(port), timeout=60)
    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1 and f"--port {port}" in run.stderr


def test_the_viewer_waits_for_results_and_keeps_the_last_report_when_a_rebuild_fails(tmp_path, monkeypatch):
    from ptbench.results.report import view

    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(view.tempfile, "tempdir", None)  # TMPDIR is read afresh
    cdir = synthetic.write(tmp_path / "results", [], [])  # planned, nothing finished yet
    broken = {"now": False}

    def build(cdir: Path, out: Path, version: int) -> None:
        if broken["now"]:
            raise RuntimeError("disk full\nand a second line")
        view.build_site(cdir, out, version)

    viewer = view.Viewer(view.campaign_dir(str(cdir)), build=build)
    try:
        assert (
            viewer.refresh()
            == f"no report yet: {cdir}: no result.json found (run the campaign first, or point at its results folder)"
        )
        assert "No report yet" in (viewer.site / "index.html").read_text() and viewer.version == 1
        assert viewer.refresh() is None and viewer.version == 1  # nothing changed: no rebuild
        r = synthetic.TRIALS[0]
        (cdir / r["trial_id"]).mkdir()
        (cdir / r["trial_id"] / "result.json").write_text(json.dumps(r))
        assert viewer.refresh() == "report built (1 trial result(s))" and viewer.version == 2
        good = viewer.site
        assert r["trial_id"] in (good / "index.html").read_text()
        broken["now"] = True
        (cdir / r["trial_id"] / "result.json").write_text(json.dumps(r | {"seed": 0}) + " ")  # changed
        assert viewer.refresh() == "the report could not be rebuilt (the last one stays): disk full"
        assert viewer.site == good and viewer.version == 2 and (good / "index.html").is_file()
    finally:
        viewer.close()
    assert not viewer.tmp.exists()
