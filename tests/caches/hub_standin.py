"""A local stand-in of the Hugging Face Hub (HF_ENDPOINT=http://127.0.0.1:PORT) for prefetch tests.

It serves what huggingface_hub's snapshot_download asks for: repository info
(/api/{models,datasets}/{repo}/revision/{rev}), the file tree (/api/.../tree/{rev}?recursive=...),
and the files (HEAD/GET /{repo}/resolve/{rev}/{path}, datasets under /datasets/) with the X-Repo-Commit,
ETag and Range (206) behaviour the client relies on. Files whose name starts with `slow` are sent in
small throttled chunks, so a test can kill a download mid-file. A file whose name starts with `flaky`
loses its connection three quarters through its first full GET (the socket is shut down there),
as a network drop would. Every request is recorded, and every body sent in `served`
(file, first byte, bytes sent).
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse


class Repo:
    def __init__(self, kind: str, repo_id: str, files: dict[str, bytes]) -> None:
        self.kind, self.id, self.files = kind, repo_id, files
        self.sha = hashlib.sha1((kind + repo_id + "".join(sorted(files))).encode()).hexdigest()


class Hub:
    def __init__(self, repos: list[Repo]) -> None:
        self.repos = {(r.kind, r.id): r for r in repos}
        self.requests: list[dict] = []
        self.bytes_sent: dict[str, int] = {}
        self.served: list[dict] = []
        self._dropped: set[str] = set()
        self.server: ThreadingHTTPServer | None = None

    def find(self, kind: str, repo_id: str, rev: str) -> Repo | None:
        r = self.repos.get((kind, repo_id))
        return r if r and rev in ("main", r.sha) else None

    def handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _json(self, obj, status=200) -> None:
                body = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _missing(self) -> None:
                self.send_response(404)
                self.send_header("X-Error-Code", "RepoNotFound")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self) -> None:
                self.do_GET()

            def do_GET(self) -> None:
                url = urlparse(self.path)
                path = unquote(url.path)
                hub.requests.append(
                    {"method": self.command, "path": path, "query": url.query, "range": self.headers.get("Range")}
                )
                if m := re.fullmatch(r"/api/(models|datasets)/(.+?)/revision/([^/]+)", path):
                    repo = hub.find(m[1][:-1], m[2], m[3])
                    if not repo:
                        return self._missing()
                    return self._json(
                        {"id": repo.id, "sha": repo.sha, "siblings": [{"rfilename": f} for f in repo.files]}
                    )
                if m := re.fullmatch(r"/api/(models|datasets)/(.+?)/tree/([^/]+)(/.*)?", path):
                    repo = hub.find(m[1][:-1], m[2], m[3])
                    if not repo:
                        return self._missing()
                    entries = [
                        {
                            "type": "file",
                            "path": f,
                            "size": len(b),
                            "oid": hashlib.sha1(b).hexdigest(),
                            "lfs": {"oid": hashlib.sha256(b).hexdigest(), "size": len(b), "pointerSize": 134},
                        }
                        for f, b in repo.files.items()
                    ]
                    return self._json(entries)
                if m := re.fullmatch(r"(/datasets)?/(.+?)/resolve/([^/]+)/(.+)", path):
                    repo = hub.find("dataset" if m[1] else "model", m[2], m[3])
                    if not repo or m[4] not in repo.files:
                        return self._missing()
                    return self._file(repo, m[4])
                self._missing()

            def _file(self, repo: Repo, name: str) -> None:
                data = repo.files[name]
                start = 0
                base = name.rsplit("/", 1)[-1]
                drop_at = None
                if (
                    base.startswith("flaky")
                    and self.command == "GET"
                    and not self.headers.get("Range")
                    and name not in hub._dropped
                ):
                    hub._dropped.add(name)
                    drop_at = len(data) * 3 // 4
                if (rng := self.headers.get("Range")) and (m := re.fullmatch(r"bytes=(\d+)-(\d*)", rng)):
                    start = int(m[1])
                self.send_response(206 if start else 200)
                etag = hashlib.sha256(data).hexdigest()
                self.send_header("X-Repo-Commit", repo.sha)
                self.send_header("ETag", f'"{etag}"')
                self.send_header("X-Linked-Etag", f'"{etag}"')
                self.send_header("X-Linked-Size", str(len(data)))
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Length", str(len(data) - start))
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if self.command == "HEAD":
                    return
                slow = base.startswith("slow")
                step = 4096 if slow else 1 << 20
                served = {"file": name, "start": start, "bytes": 0}
                hub.served.append(served)
                end = drop_at if drop_at is not None else len(data)
                for i in range(start, end, step):
                    block = data[i : min(i + step, end)]
                    try:
                        self.wfile.write(block)
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return
                    served["bytes"] += len(block)
                    hub.bytes_sent[name] = hub.bytes_sent.get(name, 0) + len(block)
                    if slow:
                        time.sleep(0.01)
                if drop_at is not None:  # the connection dies with the body half sent
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True

        return Handler

    def start(self) -> str:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()
