"""The run journal: the runner, outside the sandbox, keeps every file the agent writes as it is closed.

inotify watches every folder of every writable place (new folders as they appear). When a file is
created the runner hard-links it into journal/pending/ (same file system), so deleting or renaming
the agent's name does not free it; when it is closed after writing, its content is copied into
journal/objects/<sha256> (once per distinct content) and the link is dropped. Model weights (by
content, not by name) of 1 MiB or more are recorded but not copied; copies stop at a byte cap, and
every file not kept is recorded with why. What the journal knows it lost (events dropped by the
kernel, a file written and deleted before it could be linked, a version overwritten before it
could be copied, a folder it could not watch) is a `gap` in the summary, which the contamination
check turns into `unchecked`. The format and reader are integrity/journal.py.

Two threads: one drains the kernel's queue into memory at once (the kernel's queue is small), one
links and copies. The journal is never bound into the sandbox; under `sandbox: none` the agent can
reach it, which the summary says.
"""

from __future__ import annotations

import collections
import errno
import hashlib
import itertools
import json
import os
import stat
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ptbench.core.files import atomic_write_json
from ptbench.integrity.journal import (
    CANNOT_SEE_ALWAYS,
    CANNOT_SEE_APPTAINER,
    CANNOT_SEE_NONE,
    JOURNAL,
    OBJECTS,
    RECORDS,
    SUMMARY,
    label_of,
    weight_kind,
)
from ptbench.node import inotify as ino
from ptbench.node.inotify import Event, Inotify
from ptbench.trial import TrialDir

DEFAULT_MAX_GB = 16.0
_IN_MEMORY = 8 << 20  # files up to this size are read whole, hashed, then written (if new)
WEIGHT_MIN = 1 << 20  # weights smaller than this are copied like anything else (cheap; could hold text)
_DIR_MASK = (
    ino.CREATE
    | ino.MOVED_TO
    | ino.MOVED_FROM
    | ino.MODIFY
    | ino.CLOSE_WRITE
    | ino.DELETE
    | ino.ONLYDIR
    | ino.DONT_FOLLOW
)


class RunJournal:
    def __init__(
        self,
        trial: TrialDir,
        roots: list[Path],
        *,
        sandbox: str,
        max_bytes: int,
        cannot_see: list[str],
        private: list[Path] | None = None,
    ) -> None:
        self.trial, self.roots, self.sandbox, self.max_bytes = trial, roots, sandbox, max_bytes
        self.dir = trial.path / JOURNAL
        self.objects, self.pending = self.dir / OBJECTS, self.dir / "pending"
        self.cannot_see = cannot_see
        self.gaps: list[str] = []
        self.unwatched: list[str] = []
        self.wds: dict[int, Path] = {}
        self.names: dict[tuple[int, str], int] = {}  # (watch, name) -> inode held or captured
        self.held: dict[int, Path] = {}  # inode -> its link in pending/
        self._labels: dict[int, str] = {}  # inode -> the name it was held under
        self.early: dict[tuple[int, str], int] = {}  # linked by the drain thread as the event arrived
        self.lost: dict[tuple[int, str], bool] = {}  # names gone before they could be linked -> written to?
        self.moving: dict[int, tuple[bool, str]] = {}  # rename cookie -> (written, old label) of such a name
        self.queue: collections.deque[Event] = collections.deque()
        self.cond = threading.Condition()
        self.bytes_kept = self.files_kept = self.skipped = self.missed = 0
        self.busy_s = 0.0
        self.overflow = False
        self._stop = self._busy = False
        self._records_fd = -1
        self.private = {os.path.realpath(p) for p in private or []}  # login files the harness copied in: never kept
        self._wake_r, self._wake_w = os.pipe()
        self.notify = Inotify()
        self._threads: list[threading.Thread] = []

    # --- life cycle ---------------------------------------------------------------------------
    def start(self) -> None:
        for d in (self.objects, self.pending):
            d.mkdir(parents=True, exist_ok=True)
        self._release_leftovers()
        for root in self.roots:
            self._watch_tree(root, capture=False)
        self._threads = [
            threading.Thread(target=self._drain, name="journal-drain", daemon=True),
            threading.Thread(target=self._work, name="journal-work", daemon=True),
        ]
        self._switch = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch, 0.0005))  # the drain thread must get the GIL at once
        for t in self._threads:
            t.start()
        self.started = time.time()

    def stop(self) -> dict[str, Any]:
        """Process what is queued, keep what is still held (open at the deadline, deleted before its
        close), write the summary."""
        with self.cond:
            self._stop = True
            self.cond.notify_all()
        os.write(self._wake_w, b"x")
        for t in self._threads:
            t.join()
        sys.setswitchinterval(self._switch)
        try:
            self._process(self._take(block=False))
            for inode, link in list(self.held.items()):
                self._capture(inode, link, self._labels.get(inode, label_of(self.trial.path, link)))
            self._unresolved()
            self._release_leftovers()  # linked early, never claimed: kept too
        except Exception as exc:  # noqa: BLE001
            self.gaps.append(f"the journal failed while closing: {type(exc).__name__}: {exc}")
        self.notify.close()
        if self._records_fd >= 0:
            os.close(self._records_fd)
            self._records_fd = -1
        os.close(self._wake_r)
        os.close(self._wake_w)
        if self.overflow:
            self.gaps.append("the kernel's event queue overflowed: writes may have gone unseen")
        if self.unwatched:
            self.gaps.append(f"{len(self.unwatched)} folder(s) could not be watched: {', '.join(self.unwatched[:5])}")
        run = {
            "run": None,
            "sandbox": self.sandbox,
            "started": self.started,
            "ended": time.time(),
            "watched": [label_of(self.trial.path, r) for r in self.roots],
            "cannot_see": self.cannot_see,
            "files_kept": self.files_kept,
            "bytes_kept": self.bytes_kept,
            "skipped": self.skipped,
            "missed": self.missed,
            "busy_seconds": round(self.busy_s, 3),
            "max_bytes": self.max_bytes,
            "gaps": self.gaps,
        }
        self._append_summary(run)
        return run

    def _append_summary(self, run: dict[str, Any]) -> None:
        path = self.dir / SUMMARY
        try:
            runs = list(json.loads(path.read_text())["runs"])
        except (OSError, ValueError, KeyError, TypeError):
            runs = []
        run["run"] = len(runs) + 1
        atomic_write_json(path, {"schema_version": 1, "runs": [*runs, run]})

    def _release_leftovers(self) -> None:
        """Links not claimed (left by a runner killed -9, or linked early under a name gone since):
        what they hold is kept (it is evidence)."""
        for link in sorted(self.pending.iterdir()):
            inode = os.lstat(link).st_ino
            self._copy(link, self._labels.get(inode, f"(inode {inode}, name unknown)"), inode)
            link.unlink(missing_ok=True)

    # --- threads ------------------------------------------------------------------------------
    def _drain(self) -> None:
        while not self._stop:
            events = self.notify.read(1.0, self._wake_r)
            for ev in events:  # the race with a quick delete is won or lost here: link first, think later
                if ev.mask & (ino.CREATE | ino.MOVED_TO) and ev.name and ev.wd in self.wds:
                    self._early(ev)
            if events:
                with self.cond:
                    self.queue.extend(events)
                    self.cond.notify_all()

    def _early(self, ev: Event) -> None:
        path = self.wds[ev.wd] / ev.name
        try:
            if ino.ISDIR in ev:
                self.wds[self.notify.add_watch(str(path), _DIR_MASK)] = path
                return
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and os.path.realpath(path) not in self.private:
                try:
                    os.link(path, self.pending / str(st.st_ino), follow_symlinks=False)
                except FileExistsError:
                    pass
                self.early[(ev.wd, ev.name)] = st.st_ino
                self._labels.setdefault(st.st_ino, label_of(self.trial.path, path))
        except OSError:
            pass  # gone already, or not ours to link: the worker finds out and says so

    def _take(self, *, block: bool) -> list[Event]:
        with self.cond:
            while block and not self.queue and not self._stop:
                self.cond.wait(1.0)
            out = list(self.queue)
            self.queue.clear()
            self._busy = bool(out)
            return out

    def _work(self) -> None:
        while True:
            events = self._take(block=True)
            if not events and self._stop:
                return
            try:
                self._process(events)
            except Exception as exc:  # noqa: BLE001  (a journal that died says so; the run goes on)
                self.gaps.append(f"the journal stopped on an error: {type(exc).__name__}: {exc}")
                self._stop = True
            finally:
                with self.cond:
                    self._busy = False
                    self.cond.notify_all()

    # --- events -------------------------------------------------------------------------------
    def _process(self, events: list[Event]) -> None:
        last_write = {(ev.wd, ev.name): i for i, ev in enumerate(events) if ev.mask & ino.MODIFY}
        for i, ev in enumerate(events):
            if ino.Q_OVERFLOW in ev:
                self.overflow = True
                continue
            if ino.IGNORED in ev:
                self.wds.pop(ev.wd, None)
                continue
            folder = self.wds.get(ev.wd)
            if folder is None or not ev.name:
                continue
            path, key = folder / ev.name, (ev.wd, ev.name)
            if ino.ISDIR in ev:
                if ev.mask & (ino.CREATE | ino.MOVED_TO):
                    self._watch_tree(path, capture=True)
                continue
            if ev.mask & (ino.CREATE | ino.MOVED_TO):
                written = self.moving.pop(ev.cookie, (False, ""))[0] if ino.MOVED_TO in ev else False
                self.lost.pop(key, None)
                if not self._hold(key, path, moved=ino.MOVED_TO in ev):
                    self.lost[key] = written
            elif ev.mask & (ino.MODIFY | ino.CLOSE_WRITE) and key in self.lost:
                self.lost[key] = True  # written under a name the journal could not link (yet)
            elif ino.MODIFY in ev:
                if self.names.get(key) not in self.held and not self._hold(key, path, moved=False):
                    self.lost[key] = True
            elif ino.CLOSE_WRITE in ev:
                inode = self.names.get(key)
                link = self.held.get(inode) if inode is not None else None
                if inode is not None and link is not None:
                    self._capture(inode, link, label_of(self.trial.path, path), later=last_write.get(key, -1) > i)
            elif ev.mask & (ino.DELETE | ino.MOVED_FROM):
                self.names.pop(key, None)
                written = self.lost.pop(key, None)
                if ino.MOVED_FROM in ev and written is not None:  # followed to its new name (MOVED_TO)
                    self.moving[ev.cookie] = (written, label_of(self.trial.path, path))
                elif written:
                    self._missed(path, "written, then removed before the journal could link it")

    def _unresolved(self) -> None:
        """At the end: names written but never linked, and files moved out of sight."""
        for (wd, name), written in self.lost.items():
            if written:
                self._missed(self.wds.get(wd, Path("?")) / name, "written under a name the journal could not link")
        for written, label in self.moving.values():
            if written:
                self._missed(self.trial.path / label, "written, then moved where the journal does not look")
        self.lost.clear()
        self.moving.clear()

    def _hold(self, key: tuple[int, str], path: Path, *, moved: bool) -> bool:
        """Link the file at `path` into pending/ (False: it is gone already, and was not linked early)."""
        early = self.early.pop(key, None)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            link = self.pending / str(early)
            if early is None or not link.exists():
                return False
            self.names[key], self.held[early], self._labels[early] = early, link, label_of(self.trial.path, path)
            if moved and link.stat().st_size:
                self._capture(early, link, label_of(self.trial.path, path))
            return True
        except OSError:
            return True
        if not stat.S_ISREG(st.st_mode):
            return True
        if os.path.realpath(path) in self.private:
            if key not in self.names:
                self._record(
                    {
                        "t": time.time(),
                        "label": label_of(self.trial.path, path),
                        "kind": "skipped",
                        "why": "login file",
                        "size": st.st_size,
                    }
                )
            self.names[key] = -1
            return True
        self.names[key] = st.st_ino
        if st.st_ino in self.held:
            return True
        link = self.pending / str(st.st_ino)
        try:
            os.link(path, link, follow_symlinks=False)
        except FileExistsError:
            pass
        except FileNotFoundError:
            return False
        except OSError as exc:  # another file system (a user's extra writable folder): read by name at close
            if exc.errno != errno.EXDEV:
                raise
            link = path
        self.held[st.st_ino] = link
        self._labels[st.st_ino] = label_of(self.trial.path, path)
        if moved and st.st_size:  # moved in with its content: no close will follow
            self._capture(st.st_ino, link, label_of(self.trial.path, path))
        return True

    def _capture(self, inode: int, link: Path, label: str, *, later: bool | None = None) -> None:
        """Keep the file's content now. `later` (at a close): whether a write to the same name
        follows in the events at hand; then, or if one is queued by the time the copy is done, the
        copy may be of a later version and the closed one lost (the agent rewrote it within the
        journal's reaction time)."""
        self._copy(link, label, inode)
        if later is not None and (later or self._written_since(inode)):
            self._missed(link, f"{label}: written again before the journal had copied the closed version")
        self.held.pop(inode, None)
        if link.parent == self.pending:
            link.unlink(missing_ok=True)

    def _written_since(self, inode: int) -> bool:
        with self.cond:
            self.queue.extend(self.notify.read(0))
            ahead = list(itertools.islice(self.queue, 512))
        return any(ev.mask & ino.MODIFY and self.names.get((ev.wd, ev.name)) == inode for ev in ahead)

    def flush(self) -> None:
        """Return once every event queued so far is processed (the agent has stopped: nothing new comes)."""
        with self.cond:
            self.queue.extend(self.notify.read(0))
            while self.queue or self._busy:
                self.cond.wait(0.2)

    def _copy(self, link: Path, label: str, inode: int) -> None:
        started = time.monotonic()
        try:
            fd = self._open(link)
        except OSError as exc:
            self._missed(link, f"{label}: could not be opened ({exc.strerror})", race=False)
            return
        try:
            st = os.fstat(fd)
            rec = {"t": time.time(), "label": label, "path": str(link), "ino": inode, "size": st.st_size}
            rec["mtime_ns"] = st.st_mtime_ns
            head = os.pread(fd, 64, 0)
            kind = weight_kind(head)
            if kind and st.st_size >= WEIGHT_MIN:
                self._record({**rec, "kind": "skipped", "why": "weights", "format": kind})
                self.skipped += 1
                return
            if self.bytes_kept + st.st_size > self.max_bytes:
                self._record({**rec, "kind": "skipped", "why": "cap"})
                self.skipped += 1
                return
            sha, size = self._store(fd, st.st_size)
            self.bytes_kept += size
            self.files_kept += 1
            self._record({**rec, "kind": "kept", "sha256": sha, "size": size})
        finally:
            os.close(fd)
            self.busy_s += time.monotonic() - started

    @staticmethod
    def _open(link: Path) -> int:
        try:
            return os.open(link, os.O_RDONLY | os.O_NOFOLLOW)
        except PermissionError:  # the agent made its file unreadable: it is ours to read all the same
            os.chmod(link, os.lstat(link).st_mode | 0o400, follow_symlinks=False)
            return os.open(link, os.O_RDONLY | os.O_NOFOLLOW)

    def _store(self, fd: int, size: int) -> tuple[str, int]:
        """Copy into objects/<sha256> (once per content): small files through memory, hashed before
        anything is written (a content kept already costs no write), large ones streamed."""
        tmp = str(self.objects / f".tmp-{threading.get_ident()}")
        if size <= _IN_MEMORY:
            data = b"".join(iter(lambda: os.read(fd, size + 65536), b""))
            sha = hashlib.sha256(data).hexdigest()
            if (self.objects / sha).exists():
                return sha, len(data)
            blocks: Iterator[bytes] = iter([data])
        else:
            h, sha = hashlib.sha256(), ""
            blocks = iter(lambda: os.read(fd, 4 << 20), b"")
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        written = 0
        try:
            for block in blocks:
                if not sha:
                    h.update(block)
                written += os.write(out, block)
        finally:
            os.close(out)
        sha = sha or h.hexdigest()
        os.replace(tmp, self.objects / sha)
        return sha, written

    def _missed(self, path: Path, why: str, *, race: bool = True) -> None:
        """A version the journal could not keep: lost to its reaction time (`race`), or not readable."""
        self.missed += 1
        rec = {"t": time.time(), "label": label_of(self.trial.path, path), "kind": "missed", "why": why, "race": race}
        self._record(rec)

    def _record(self, rec: dict[str, Any]) -> None:
        if rec.get("path", "").startswith(str(self.pending)):
            rec["path"] = ""
        if self._records_fd < 0:
            self._records_fd = os.open(self.dir / RECORDS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self._records_fd, (json.dumps(rec) + "\n").encode())  # one write(2): a reader never sees half

    def _watch_tree(self, root: Path, *, capture: bool) -> None:
        for dirpath, dirs, files in os.walk(root):
            try:
                wd = self.notify.add_watch(dirpath, _DIR_MASK)
            except OSError as exc:
                self.unwatched.append(f"{label_of(self.trial.path, Path(dirpath))} ({exc.strerror})")
                dirs[:] = []
                continue
            self.wds[wd] = Path(dirpath)
            if capture:  # written before the watch existed: keep it now (a later close is seen too)
                for f in files:
                    self._hold((wd, f), Path(dirpath) / f, moved=True)


def journal_roots(trial: TrialDir, cache_upper: Path | None, extra: list[Path]) -> list[Path]:
    roots = [trial.workspace, trial.home, *sandbox_dirs(trial)]
    if cache_upper is not None:
        roots.append(cache_upper)
    return [r for r in [*roots, *extra] if r.is_dir()]


def sandbox_dirs(trial: TrialDir) -> list[Path]:
    """The folders bound at /tmp and /dev/shm inside bwrap (made here so they exist before the journal watches them)."""
    from ptbench.integrity.journal import SANDBOX_SHM, SANDBOX_TMP

    out = [trial.path / SANDBOX_TMP, trial.path / SANDBOX_SHM]
    for d in out:
        d.mkdir(parents=True, exist_ok=True)
        d.chmod(0o1777)
    return out


@contextmanager
def run_journal(
    trial: TrialDir,
    sandbox: str,
    *,
    cache_upper: Path | None = None,
    extra: list[Path] | None = None,
    private: list[Path] | None = None,
) -> Iterator[RunJournal | None]:
    """The journal for one solve stage; None (and an event saying why) where inotify is unavailable."""
    cannot = list(CANNOT_SEE_ALWAYS) + (list(CANNOT_SEE_NONE) if sandbox == "none" else [])
    cannot += list(CANNOT_SEE_APPTAINER) if sandbox == "apptainer" else []
    roots = [trial.workspace, trial.home] if sandbox == "none" else journal_roots(trial, cache_upper, extra or [])
    max_gb = float(trial.spec.sandbox_options.get("journal_max_gb", DEFAULT_MAX_GB))
    try:
        journal = RunJournal(
            trial, roots, sandbox=sandbox, max_bytes=int(max_gb * (1 << 30)), cannot_see=cannot, private=private
        )
        journal.start()
    except OSError as exc:
        trial.event("journal", state="unavailable", why=str(exc)[:300])
        (trial.path / JOURNAL).mkdir(exist_ok=True)
        atomic_write_json(
            trial.path / JOURNAL / SUMMARY,
            {"schema_version": 1, "runs": [{"run": 1, "sandbox": sandbox, "gaps": [f"no journal: {exc}"]}]},
        )
        yield None
        return
    trial.event("journal", state="on", watched=[label_of(trial.path, r) for r in roots])
    try:
        yield journal
    finally:
        run = journal.stop()
        trial.event(
            "journal",
            state="closed",
            files_kept=run["files_kept"],
            bytes_kept=run["bytes_kept"],
            skipped=run["skipped"],
            missed=run["missed"],
            gaps=len(run["gaps"]),
        )
