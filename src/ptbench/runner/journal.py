"""The run journal: the runner, outside the sandbox, keeps every file the agent writes as it is closed.

inotify watches every folder of every writable place (new folders as they appear). As a file's
creation is read, the runner opens it read-only and keeps the descriptor, so deleting or renaming
the agent's name does not free it (and nothing the agent can see changes: no extra link); when it
is closed after writing, its content is copied into journal/objects/<sha256> (once per distinct
content, journal_store.py) and the descriptor is closed. Weights (by content, not by name) of 1 MiB
or more are recorded but not copied; copies stop at a byte cap, and every file not kept is
recorded with why. A file that lived shorter than the journal's reaction time is counted as
missed. What the journal knows it lost otherwise (events dropped by the kernel, a folder it could
not watch, a file it could not read) is a `gap` in the summary, which the contamination check
turns into `unchecked`. The format and reader are integrity/journal.py.

Two threads: one drains the kernel's queue at once and grabs each new file as its event arrives
(the race with a quick delete is won or lost there), one copies. The journal is never bound into
the sandbox; under `sandbox: none` the agent can reach it, which the summary says.
"""

from __future__ import annotations

import collections
import errno
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
    JOURNAL,
    SUMMARY,
    label_of,
)
from ptbench.launch.solve_launch import sandbox_dirs
from ptbench.node import inotify as ino
from ptbench.node.inotify import Event, Inotify
from ptbench.runner.journal_store import JournalStore, Source
from ptbench.sandbox.request import sandbox_facts
from ptbench.trial import TrialDir

DEFAULT_MAX_GB = 16.0
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
        self.pending = self.dir / "pending"
        self.store = JournalStore(self.dir, max_bytes)
        self.objects = self.store.objects
        self.cannot_see = cannot_see
        self.gaps: list[str] = []
        self.unwatched: list[str] = []
        self.wds: dict[int, Path] = {}
        self.names: dict[tuple[int, str], int] = {}  # (watch, name) -> inode held or captured
        self.held: dict[int, Source] = {}  # inode -> how to read it (until its close is captured)
        self._labels: dict[int, str] = {}  # inode -> the name it was held under
        self.early: dict[tuple[int, str], tuple[int, Source]] = {}  # held by the drain thread as the event arrived
        self.lost: dict[tuple[int, str], bool] = {}  # names gone before they could be linked -> written to?
        self.moving: dict[int, tuple[bool, str]] = {}  # rename cookie -> (written, old label) of such a name
        self.queue: collections.deque[Event] = collections.deque()
        self.cond = threading.Condition()
        self.overflow = False
        self._stop = self._busy = False
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
        self.started = time.time()
        self._append_summary({"sandbox": self.sandbox, "started": self.started, "ended": None})
        for t in self._threads:
            t.start()

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
            for inode, src in list(self.held.items()):
                self._capture(inode, src, self._labels.get(inode, f"(inode {inode})"))
            for inode, src in list(self.early.values()):  # held as they appeared, never claimed
                self._capture(inode, src, self._labels.get(inode, f"(inode {inode})"))
            self.early.clear()
            self._unresolved()
            self._release_leftovers()  # linked early, never claimed: kept too
        except Exception as exc:  # noqa: BLE001
            self.gaps.append(f"the journal failed while closing: {type(exc).__name__}: {exc}")
        self.notify.close()
        self.store.close()
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
            "files_kept": self.store.files_kept,
            "bytes_kept": self.store.bytes_kept,
            "skipped": self.store.skipped,
            "missed": self.store.missed_count,
            "busy_seconds": round(self.store.busy_s, 3),
            "max_bytes": self.max_bytes,
            "gaps": self.gaps,
        }
        self._append_summary(run)
        return run

    def _append_summary(self, run: dict[str, Any]) -> None:
        """This run's entry; the placeholder written at start (`ended: null`) is replaced, so a run
        whose runner was killed stays in the summary as not closed."""
        path = self.dir / SUMMARY
        try:
            runs = list(json.loads(path.read_text())["runs"])
        except (OSError, ValueError, KeyError, TypeError):
            runs = []
        if runs and runs[-1].get("ended") is None and runs[-1].get("started") == run["started"]:
            runs.pop()
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
            if os.path.realpath(path) not in self.private and (got := self._grab(path)) is not None:
                self.early[(ev.wd, ev.name)] = got
                self._labels.setdefault(got[0], label_of(self.trial.path, path))
        except OSError:
            pass  # gone already, or not ours to hold: the worker finds out and says so

    def _grab(self, path: Path) -> tuple[int, Source] | None:
        """(inode, a way to read it later) for a regular file: an open descriptor, which keeps the
        file readable after the agent deletes it and changes nothing it can see (its link count
        stays; tools such as Claude Code refuse files with more than one link). Where no
        descriptor can be had (unreadable mode, too many open files) a hard link in pending/."""
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            return None
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EMFILE, errno.ENFILE):
                raise
            link = self.pending / str(st.st_ino)
            try:
                os.link(path, link, follow_symlinks=False)
            except FileExistsError:
                pass
            except OSError as err:  # another file system (a user's extra writable folder): read by name
                if err.errno != errno.EXDEV:
                    raise
                link = path
            return st.st_ino, link
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode):  # swapped for something else between lstat and open
            os.close(fd)
            return None
        return fst.st_ino, fd

    def _release(self, src: Source) -> None:
        if isinstance(src, int):
            os.close(src)
        elif src.parent == self.pending:
            src.unlink(missing_ok=True)

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
                self.lost[key] = True  # written under a name the journal could not hold (yet)
            elif ino.MODIFY in ev:
                if self.names.get(key) not in self.held and not self._hold(key, path, moved=False):
                    self.lost[key] = True
            elif ino.CLOSE_WRITE in ev:
                inode = self.names.get(key)
                src = self.held.get(inode) if inode is not None else None
                if inode is not None and src is not None:
                    self._capture(inode, src, label_of(self.trial.path, path), later=last_write.get(key, -1) > i)
            elif ev.mask & (ino.DELETE | ino.MOVED_FROM):
                self.names.pop(key, None)
                was = self.lost.pop(key, None)  # None: held (or never written)
                if ino.MOVED_FROM in ev and was is not None:  # followed to its new name (MOVED_TO)
                    self.moving[ev.cookie] = (was, label_of(self.trial.path, path))
                elif was:
                    self._missed(path, "written, then removed before the journal could hold it")

    def _unresolved(self) -> None:
        """At the end: names written but never linked, and files moved out of sight."""
        for (wd, name), written in self.lost.items():
            if written:
                self._missed(self.wds.get(wd, Path("?")) / name, "written under a name the journal could not hold")
        for written, label in self.moving.values():
            if written:
                self._missed(label, "written, then moved where the journal does not look")
        self.lost.clear()
        self.moving.clear()

    def _hold(self, key: tuple[int, str], path: Path, *, moved: bool) -> bool:
        """Hold the file at `path` until its close (False: it is gone already, and was not held early)."""
        early = self.early.pop(key, None)
        label = label_of(self.trial.path, path)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        except OSError:
            return True
        if early is not None and (st is None or st.st_ino != early[0]):
            if st is None:  # gone: the early hold is all there is
                return self._adopt(key, early, label, moved=moved)
            self._capture(*early, label)  # the name was replaced: keep what it held first
            early = None
        if st is None:
            return False
        if not stat.S_ISREG(st.st_mode):
            return True
        if os.path.realpath(path) in self.private:
            if key not in self.names:
                rec = {"t": time.time(), "label": label, "kind": "skipped", "why": "login file", "size": st.st_size}
                self._record(rec)
            self.names[key] = -1
            return True
        if st.st_ino in self.held:
            if early is not None and early[1] != self.held[st.st_ino]:
                self._release(early[1])
            self.names[key] = st.st_ino
            return True
        if early is None:
            try:
                early = self._grab(path)
            except FileNotFoundError:
                return False
            if early is None:
                return True
        return self._adopt(key, early, label, moved=moved)

    def _adopt(self, key: tuple[int, str], held: tuple[int, Source], label: str, *, moved: bool) -> bool:
        inode, src = held
        if inode in self.held:  # another name of a file held already
            if src != self.held[inode]:
                self._release(src)
        else:
            self.held[inode] = src
        self.names[key] = inode
        self._labels[inode] = label
        if moved and self._size(self.held[inode]):  # moved in with its content: no close will follow
            self._capture(inode, self.held[inode], label)
        return True

    @staticmethod
    def _size(src: Source) -> int:
        try:
            return os.fstat(src).st_size if isinstance(src, int) else os.stat(src).st_size
        except OSError:
            return 0

    def _capture(self, inode: int, src: Source, label: str, *, later: bool | None = None) -> None:
        """Keep the file's content now. `later` (at a close): whether a write to the same name
        follows in the events at hand; then, or if one is queued by the time the copy is done, the
        copy may be of a later version and the closed one lost (the agent rewrote it within the
        journal's reaction time)."""
        self._copy(src, label, inode)
        if later is not None and (later or self._written_since(inode)):
            self._missed(label, "written again before the journal had copied the closed version")
        if self.held.get(inode) is src:
            del self.held[inode]
        self._release(src)

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

    def _copy(self, src: Source, label: str, inode: int) -> None:
        self.store.copy(src, label, inode)

    def _missed(self, where: Path | str, why: str, *, race: bool = True) -> None:
        self.store.missed(where if isinstance(where, str) else label_of(self.trial.path, where), why, race=race)

    def _record(self, rec: dict[str, Any]) -> None:
        self.store.record(rec)

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
    facts = sandbox_facts(sandbox)
    cannot = list(CANNOT_SEE_ALWAYS) + list(facts.cannot_see)
    # Without a mount namespace the agent's writable places are the host's: only its own folders are watched.
    roots = journal_roots(trial, cache_upper, extra or []) if facts.isolates else [trial.workspace, trial.home]
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
