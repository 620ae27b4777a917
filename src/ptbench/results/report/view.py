"""`ptbench view DIR`: the report of a campaign's results folder, served on 127.0.0.1 and rebuilt while
the campaign runs (the habit of `inspect view` and `harbor view`).

Every `interval` seconds the viewer stats the campaign's records (campaign.json and each trial's
result.json, which the runner writes last and atomically); when one changed it rebuilds the whole
site (the same `build_report` as `ptbench report`) into a new folder under a private temporary
directory and serves that one from then on, under a secret path (`_handler` says why). Its pages
carry one script of ours (report.LIVE_SCRIPT, allowed by its hash) that polls VERSION_PATH, relative
to the page, and reloads the page when the build number moved.
Nothing is written into the results folder; the temporary sites go when the viewer stops (Ctrl-C).
A build that fails (no records yet, a record half-copied by hand) keeps the last good site and shows
the reason on the console and, before any good build, on the page.
"""

from __future__ import annotations

import errno
import hmac
import http.server
import secrets
import shutil
import signal
import socketserver
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from ptbench.core.errors import UserError
from ptbench.core.files import atomic_write_text

DEFAULT_PORT = 7575  # inspect view's: a user of both types one number
HOST = "127.0.0.1"  # never another interface: the report shows what the agents did

Signature = tuple[tuple[str, int, int], ...]


def campaign_dir(target: str) -> Path:
    """The campaign results folder `target` names (or a campaign file's); UserError otherwise."""
    from ptbench.results.collate import resolve_campaign_dir

    path = Path(target)
    if path.is_file():
        cdir = resolve_campaign_dir(target)[0]
        if not (cdir / "campaign.json").is_file():
            raise UserError(
                f"{target}: its results folder {cdir} is not planned yet (run `ptbench run {target}` first)"
            )
        return cdir
    if not path.is_dir():
        raise UserError(f"{target}: no such folder (give a campaign's results folder, e.g. results/demo)")
    if not (path / "campaign.json").is_file():
        raise UserError(
            f"{target}: not a campaign results folder (it has no campaign.json; give results/<campaign>, "
            "the folder `ptbench run` writes, or the campaign file)"
        )
    return path.resolve()


def signature(cdir: Path) -> Signature:
    """What a rebuild depends on: (name, mtime, size) of campaign.json and every trial's result.json.
    One stat per trial folder, never a walk into the trials (their workspaces may hold models)."""
    out = []
    for path in [cdir / "campaign.json", *(d / "result.json" for d in cdir.iterdir() if d.is_dir())]:
        try:
            st = path.stat()
        except OSError:
            continue
        out.append((str(path), st.st_mtime_ns, st.st_size))
    return tuple(sorted(out))


def build_site(cdir: Path, out: Path, version: int) -> None:
    """The report of `cdir` into `out`, as `ptbench report` writes it, with the reloading script."""
    from ptbench.results.collate import collate_dirs, write_outputs
    from ptbench.results.report import build_report

    result = collate_dirs([cdir])
    write_outputs(result, out / "tables")  # in this process: the forked plotter wants a single thread
    build_report(result, out, out / "tables", live=version)


def waiting_page(out: Path, version: int, why: str) -> None:
    """The page served until a first build succeeds: the reason, reloading like the report."""
    from ptbench.results.report import _env, live_context

    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(
        out / "index.html", _env.get_template("waiting.html.j2").render(live=live_context(version), why=why)
    )


class Viewer:
    def __init__(self, cdir: Path, build: Callable[[Path, Path, int], None] = build_site):
        self.cdir, self._build = cdir, build
        self.tmp = Path(tempfile.mkdtemp(prefix="ptbench-view-"))
        self.version = 0
        self.site = self.tmp / "site-0"
        self._good = False
        self._seen: Signature | None = None

    def refresh(self) -> str | None:
        """Rebuild if the records changed; returns a line for the console when something happened."""
        seen = signature(self.cdir)
        if seen == self._seen:
            return None
        self._seen = seen
        version = self.version + 1
        site = self.tmp / f"site-{version}"
        try:
            self._build(self.cdir, site, version)
        except Exception as exc:  # noqa: BLE001 - a bad build keeps the last good site; the user is told
            shutil.rmtree(site, ignore_errors=True)
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if self._good:
                return f"the report could not be rebuilt (the last one stays): {why}"
            waiting_page(site, version, why)
            said = f"no report yet: {why}"
        else:
            self._good = True
            said = f"report built ({len(seen) - 1} trial result(s))"
        self.site, self.version = site, version
        # the one before the previous: a request still reading the previous site finishes
        shutil.rmtree(self.tmp / f"site-{version - 2}", ignore_errors=True)
        return said

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def _handler(viewer: Viewer, token: str) -> type[http.server.SimpleHTTPRequestHandler]:
    """Serves the newest site under /<token>/ only: anything on this machine can connect to
    127.0.0.1, an agent of a running campaign among them (under `network: host`), and the report
    holds every trial's evaluation samples with their reference answers. The token is made in this
    process, printed to the user's terminal and written into no file (the pages poll relatively)."""
    from ptbench.results.report import VERSION_PATH

    prefix = f"/{token}"

    class Handler(http.server.SimpleHTTPRequestHandler):
        # raw files are agent-written text: shown as text, never sniffed into HTML
        extensions_map = {
            **http.server.SimpleHTTPRequestHandler.extensions_map,
            ".log": "text/plain; charset=utf-8",
            ".txt": "text/plain; charset=utf-8",
            ".jsonl": "text/plain; charset=utf-8",
            ".json": "application/json",
        }

        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(viewer.site), **kwargs)  # the newest site, per request

        def end_headers(self) -> None:
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            super().end_headers()

        def _route(self) -> bool:
            """Strip the token from self.path; False (and a 404 sent) without it."""
            path = self.path.split("?", 1)[0]
            if path == "/favicon.ico":  # asked for by the browser on a raw file's page: none, not a 404
                self.send_response(204)
                self.end_headers()
                return False
            if path == prefix:
                self.send_response(301)
                self.send_header("Location", prefix + "/")
                self.end_headers()
                return False
            if not hmac.compare_digest(path[: len(prefix) + 1], prefix + "/"):
                self.send_error(404)
                return False
            self.path = self.path[len(prefix) :]
            return True

        def list_directory(self, path):  # noqa: ANN001 - the base class's signature
            self.send_error(404)  # only the site's pages, never a listing
            return None

        def do_HEAD(self) -> None:
            if self._route():
                super().do_HEAD()

        def do_GET(self) -> None:
            if not self._route():
                return
            path = self.path.split("?", 1)[0]
            if path == VERSION_PATH:
                body = str(viewer.version).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
            pass  # one line a request would bury the rebuild lines

    return Handler


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def bind(viewer: Viewer, port: int | None, token: str) -> _Server:
    """The server on HOST: `port`, or DEFAULT_PORT when free, else any free port."""
    handler = _handler(viewer, token)
    for p in [port] if port is not None else [DEFAULT_PORT, 0]:
        try:
            return _Server((HOST, p), handler)
        except OSError as exc:
            if port is None and p == DEFAULT_PORT and exc.errno == errno.EADDRINUSE:
                continue  # the default is taken (another viewer): any free port
            raise UserError(
                f"--port {p}: cannot listen on {HOST}:{p} ({exc.strerror}); choose another, or 0 for any free port"
            ) from None
    raise AssertionError("port 0 is always free")


def serve(target: str, port: int | None, interval: float, say: Callable[[str], None]) -> None:
    """Serve until Ctrl-C (or SIGTERM); everything it made is removed on the way out. The signal only
    asks to stop: a KeyboardInterrupt raised in the middle of a report rebuild could land where it is
    caught or leaves work half done (a Ctrl-C under load once left the viewer running), so the loop
    stops between rebuilds instead."""
    if interval <= 0:
        raise UserError(f"--interval {interval:g}: give the seconds between checks for new results, e.g. 2")
    cdir = campaign_dir(target)
    viewer = Viewer(cdir)
    server = None
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda signum, frame: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        token = secrets.token_urlsafe(18)
        server = bind(viewer, port, token)
        say(viewer.refresh() or "")
        thread = threading.Thread(target=server.serve_forever, name="ptbench-view", daemon=True)
        thread.start()
        say(f"serving the report of {cdir} at http://{HOST}:{server.server_address[1]}/{token}/ (Ctrl-C stops)")
        while not stop.wait(interval):
            line = viewer.refresh()
            if line:
                say(line)
        say("stopped")
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()
        viewer.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
