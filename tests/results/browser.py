"""For the report's tests: a real headless Chromium (Debian's chromium driven by Playwright, never
`playwright install`, which downloads its own browser; missing, it fails the test in CI and skips it
elsewhere: tests.support.require), and the agent colours a figure's PNG says it was drawn in."""

from __future__ import annotations

import json
import shutil
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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


@contextmanager
def chromium() -> Iterator:
    """A Playwright Browser on the system's chromium."""
    require(
        Path(CHROMIUM).exists() and shutil.which("chromium") is not None,
        "chromium missing (bash scripts/install.sh test installs Debian's chromium)",
    )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "playwright missing (bash scripts/install.sh test installs it)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def watch_errors(page, errors: list[str]) -> None:
    """Collect the page's console errors and uncaught exceptions (a CSP violation is one)."""
    page.on("console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))


def png_text(path: Path) -> dict[str, str]:
    """The tEXt/zTXt/iTXt chunks of a PNG (where matplotlib writes savefig's metadata)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    out, i = {}, 8
    while i < len(data):
        (n,) = struct.unpack(">I", data[i : i + 4])
        kind, body = data[i + 4 : i + 8], data[i + 8 : i + 8 + n]
        if kind == b"tEXt":
            k, v = body.split(b"\0", 1)
            out[k.decode("latin-1")] = v.decode("latin-1")
        elif kind == b"zTXt":
            k, v = body.split(b"\0", 1)
            out[k.decode("latin-1")] = zlib.decompress(v[1:]).decode("latin-1")
        elif kind == b"iTXt":
            k, rest = body.split(b"\0", 1)
            flag, rest = rest[0], rest[2:]
            _lang, _key, text = rest.split(b"\0", 2)
            out[k.decode("latin-1")] = (zlib.decompress(text) if flag else text).decode()
        i += 12 + n
    return out


def drawn_colors(png: Path) -> dict[str, list[str]]:
    """{agent: [colours its artists were drawn in]} from the figure's PNG (plots.COLORS_KEY)."""
    from ptbench.results.plots import COLORS_KEY

    return json.loads(png_text(png)[COLORS_KEY])
