"""Shared fixtures: a tiny local model, test agents, and `require` (fail in CI, skip locally)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import require  # noqa: F401  (re-exported for test modules)

REPO = Path(__file__).resolve().parents[1]
FIXTURE_AGENTS = REPO / "tests" / "fixtures" / "agents"

# vLLM's CPU build compiles the model with inductor when it starts (42 s of an 86 s start here); the
# suite starts vLLM about ten times for a few dozen tokens each, which never repays it. Eager mode is
# the same engine and kernels without the compiled graph. Every `ptbench eval` the tests run (the
# runner passes PTBENCH_* to it) and `tests.bootcamp.rollout.test_rollout_vllm_e2e.vllm_server` take it; on a GPU
# machine (the `gpu` tests) nothing is changed. Measured here (2026-12-02): 86 s a start, 44 s eager.
VLLM_TEST_ARGS = '{"enforce_eager": true}'
if not os.path.exists("/dev/nvidia0"):
    os.environ.setdefault("PTBENCH_VLLM_ARGS", VLLM_TEST_ARGS)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A random tiny Llama + tokenizer, made once per test session (no hub download)."""
    from ptbench.demo import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("models") / "tiny-llama")


@pytest.fixture(scope="session")
def tiny_vllm_server(tmp_path_factory) -> Iterator[int]:
    """vLLM's OpenAI-compatible server (CPU build) serving a tiny random Llama with tool tokens as "tiny",
    16384 tokens of context (mini-swe-agent's prompt is about 5000 in its 400-token vocabulary); yields
    its port. Started once for the tests that use it, all marked xdist_group("vllm-server") so they run
    on one worker: the start is most of each such test. Ask for it after the test's own `require`s."""
    from tests.bootcamp.rollout.test_rollout_vllm_e2e import make_tiny_llama, vllm_server

    model_dir = tmp_path_factory.mktemp("vllm-server") / "tiny-llama"
    make_tiny_llama(model_dir, max_positions=16384)
    with vllm_server(model_dir, model_dir.parent / "vllm.log", max_model_len=16384) as port:
        yield port


@pytest.fixture
def test_agents(monkeypatch) -> Path:
    """Make the scripted shell agents in tests/fixtures/agents visible to the launcher (and to runners it starts)."""
    monkeypatch.setenv("PTBENCH_AGENTS_PATH", str(FIXTURE_AGENTS))
    return FIXTURE_AGENTS


@pytest.fixture
def write_campaign(tmp_path: Path, tiny_model: Path):
    """Write a campaign YAML into tmp_path; results go to tmp_path/results."""

    def make(body: str, name: str = "c.yaml") -> Path:
        text = textwrap.dedent(body).replace("@MODEL@", str(tiny_model)).replace("@RESULTS@", str(tmp_path / "results"))
        path = tmp_path / name
        path.write_text(text)
        return path

    return make


def ptbench(
    *args: str, cwd: Path | None = None, timeout: float = 600, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run the real `ptbench` command as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "ptbench", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


@functools.cache
def _has_module_fixture(path: Path) -> bool:
    return 'scope="module"' in path.read_text()


# Seconds the slowest units took (a fresh clone, `CI=true bash scripts/test.sh --durations=0`, 2 cores,
# 3 workers, 2026-12-07; `python scripts/suite_profile.py LOG --ci-seconds --at-least 40` prints them),
# for the order below only: a stale or missing entry never changes what a test proves, only how evenly
# the workers finish. Keys are node ids, or a file run whole on one worker (its module fixture and tests).
CI_SECONDS = {
    "tests/integrity/test_memorization.py": 305,  # 367 less the vLLM test moved to test_engines.py
    "tests/demo/test_demo.py::test_demo_campaign_reference_masters_the_task": 328,
    "tests/runner/test_runner_paper_campaign.py": 306,
    "tests/agents/test_agents_real_trials.py": 182,
    "tests/integrity/test_selftest.py::test_the_quick_form_end_to_end_matches_the_recorded_table": 163,
    "tests/integrity/test_memorization_gsm8k_siblings.py": 144,
    "tests/export/test_harbor_verify.py": 132,
    "tests/backends/slurm/test_slurm_demo.py::test_demo_on_slurm_matches_local": 117,
    "tests/integrity/test_memorization_mcq_siblings.py": 100,
    "tests/inference/test_engines.py": 95,  # 85 and the vLLM scoring test from test_memorization.py
    "tests/test_stock_machine.py::test_the_quickstart_install_step_runs_on_a_stock_path_into_its_own_venv": 90,
    "tests/integrity/test_model_identity_disguises.py": 85,
    "tests/agents/test_agents_mini_swe_agent.py::test_rehearsal_runs_bash_in_the_workspace_and_is_continued": 74,
    "tests/bootcamp/export/test_verl_export.py::test_verl_consumes_bootcamp_data_tools_agent_loop_and_reward": 68,
    "tests/backends/local/test_local_campaign.py::test_run_status_rerun_and_replace": 65,
    "tests/bootcamp/export/test_grpo.py::test_reference_grpo_trains_in_a_real_trial_and_records_its_bootcamp": 63,
    "tests/test_bench_scripts.py::test_bench_script_runs_tiny_and_prints_its_figures[bench_eval_overhead.py]": 63,
    "tests/cli/test_cli_shortcuts.py::test_retry_failed_and_cancelled_keep_every_attempt": 60,
    "tests/backends/slurm/test_slurm_cluster.py::test_campaign_is_one_array_and_resubmits_only_what_is_left": 56,
    "tests/bootcamp/test_verify_plugin.py": 51,
    (
        "tests/inference/test_judge_failures.py::"
        "test_runner_records_eval_failed_not_completed_and_counts_below_threshold"
    ): 50,
    "tests/tasks/test_tasks_plugin.py": 48,
    "tests/integrity/test_model_identity.py": 47,
    "tests/tasks/test_evaluate_reach.py::test_agents_evaluate_sh_shows_scores_without_references": 42,
    "tests/agents/test_agents_mini_swe_agent.py::test_open_model_on_a_vllm_server_through_the_gateway": 41,
    "tests/backends/slurm/test_slurm_cluster.py::test_scontrol_requeue_resumes_with_the_remaining_budget": 41,
}
SLOW_SECONDS, FAST_SECONDS = 20, 1  # a guess for a test CI_SECONDS does not name, by its `slow` mark


def _unit(item: pytest.Item) -> str:
    """The work unit pytest-xdist's loadgroup schedules the item in: its group, or the test alone."""
    mark = item.get_closest_marker("xdist_group")
    return str(mark.args[0]) if mark else item.nodeid


def _longest_first(items: list[pytest.Item]) -> None:
    """Reorder ITEMS in place so that the work units that take longest come first, each unit's tests
    in their own order. A long test that starts last leaves the other workers idle for most of it
    (the demo test alone took 7 of CI's 40 minutes); started first, it overlaps the many short tests.
    Needs xdist's own reordering (by test count) off: pytest_configure."""
    seconds: dict[str, float] = {}
    charged: set[str] = set()
    for item in items:
        unit, path = _unit(item), item.nodeid.split("::")[0]
        if item.nodeid in CI_SECONDS:
            cost = CI_SECONDS[item.nodeid]
        elif path in CI_SECONDS:  # the whole file's cost, charged once
            cost = 0 if path in charged else CI_SECONDS[path]
            charged.add(path)
        else:
            cost = SLOW_SECONDS if item.get_closest_marker("slow") else FAST_SECONDS
        seconds[unit] = seconds.get(unit, 0) + cost
    first = {}
    for i, item in enumerate(items):
        first.setdefault(_unit(item), i)
    # Stable: equal costs keep collection order, and every worker sorts the same list the same way
    # (pytest-xdist refuses to run when the workers' collections differ).
    items.sort(key=lambda item: (-seconds[_unit(item)], first[_unit(item)]))


def pytest_configure(config) -> None:
    if config.getoption("dist", "no") == "loadgroup":
        # pytest-xdist would reorder the work units by their number of tests, undoing _longest_first.
        config.option.loadscopereorder = False
    _threads_per_worker()


def _threads_per_worker() -> None:
    """On a pytest-xdist worker, torch's (OpenMP's) threads in this process and every process it starts
    (trials, checks, evaluations, servers): the cores shared among the workers, as the local backend
    shares them among its trials (one thread each for scripts/test.sh's three workers on two cores).
    torch's default, every core in each worker, spins waiting for a core:
    tests/integrity/test_model_identity_disguises.py took 60 CPU s with 2 threads, 39 with 1 on CI's 2 cores.
    Set before any test module imports torch; a value already set is kept. Training in
    the tests fixes its own threads (the reference recipe's `threads`), so no weight depends on this."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
    if os.environ.get("PYTEST_XDIST_WORKER") and workers:
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))


# -- `slow` tests are opt-in locally ------------------------------------------------------------
# A plain `pytest` is the quick loop (the slow tests train models and run campaigns: most of the
# suite's time); CI (CI=true) and scripts/test.sh, which CI runs, run every test.
SLOW_HOW = "pass --slow or set PTBENCH_SLOW=1 to run them (CI=true and scripts/test.sh run every test)"
_SLOW_LEFT = pytest.StashKey[int]()


def run_slow(config) -> bool:
    """Whether this run includes the `slow` tests: asked for (--slow, PTBENCH_SLOW=1), in CI, or
    chosen by a `-m` expression that names the mark (then -m alone decides)."""
    return bool(
        config.getoption("slow")
        or os.environ.get("PTBENCH_SLOW") == "1"
        or os.environ.get("CI") == "true"
        or "slow" in (config.getoption("markexpr") or "")
    )


def _named(config, item: pytest.Item) -> bool:
    """The test was named on the command line (`pytest path::test`): it runs, slow or not."""
    for arg in config.args:
        path, sep, name = arg.partition("::")
        if sep and Path(config.invocation_params.dir, path).resolve() == Path(item.path).resolve():
            test = item.nodeid.partition("::")[2]
            if test == name or test.startswith((name + "[", name + "::")):
                return True
    return False


def _leave_out_slow(config, items: list[pytest.Item]) -> None:
    if run_slow(config):
        return
    left = [item for item in items if item.get_closest_marker("slow") and not _named(config, item)]
    if left:
        dropped = set(map(id, left))
        items[:] = [item for item in items if id(item) not in dropped]
        config.hook.pytest_deselected(items=left)
    config.stash[_SLOW_LEFT] = len(left)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook, which reads the group marks
def pytest_collection_modifyitems(config, items) -> None:
    """`slow` tests are left out unless asked for (run_slow). Under pytest-xdist (`-n 3 --dist
    loadgroup`, scripts/test.sh) tests spread one by one over the workers, except: every test that
    uses the dev Slurm cluster runs on one worker, in order, as the one-node cluster expects; a file
    with module-scoped fixtures (trained models, servers) runs whole on one worker, so they are built
    once. The longest units are handed out first (_longest_first)."""
    _leave_out_slow(config, items)
    for item in items:
        if item.get_closest_marker("slurm"):
            item.add_marker(pytest.mark.xdist_group("slurm"))
        elif _has_module_fixture(item.path):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    if config.getoption("dist", "no") == "loadgroup":
        _longest_first(items)


def pytest_xdist_node_collection_finished(node, ids) -> None:
    """Under loadgroup, a worker's node ids must carry their group (`…@group`): that suffix is all
    the scheduler reads. pytest 9.2 keeps node ids where xdist 3.8 no longer writes them
    (pytest-xdist#1386), and then every group spreads silently over both workers (the paper
    campaign's 5-minute module fixture ran twice in CI). Stop the run rather than lose it."""
    if node.config.getoption("dist", "no") != "loadgroup":
        return
    root = node.config.rootpath
    lost = [i for i in ids if "@" not in i and _has_module_fixture(root / i.split("::")[0])]
    if lost:
        pytest.exit(
            f"pytest-xdist did not group {len(lost)} tests (e.g. {lost[0]}): pytest {pytest.__version__} with this "
            "pytest-xdist drops the xdist_group suffix (pytest-xdist#1386); install the pins of pyproject.toml's "
            "dev extra (bash scripts/install.sh test)",
            returncode=2,
        )


# -- CPU seconds per test (`--cpu-durations=N`) ------------------------------------------------
# Wall-clock durations mean little on a shared, loaded machine (a `ptbench eval` measured 219 s of
# wall for 25 s of CPU at load 17 on 2 cores); CPU seconds are the work a test costs whatever else runs.
# Counted: pytest's own process and every child process it (transitively) waited for; a process
# that outlives the test or is reaped by a process nobody waits for is missed, so the figure is a floor.


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--slow", action="store_true", help="also run the `slow` tests (CI=true or PTBENCH_SLOW=1: the same)"
    )
    parser.addoption(
        "--cpu-durations",
        type=int,
        default=None,
        metavar="N",
        help="show the N tests with the most CPU seconds (this process and the children it waited for), "
        "and the total; 0 shows all",
    )


def _cpu_seconds() -> float:
    import resource

    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


_CPU_START = pytest.StashKey[float]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if item.config.getoption("cpu_durations") is None:
        yield
        return
    item.stash[_CPU_START] = _cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when == "teardown" and _CPU_START in item.stash:
        # user_properties travel with the report from a pytest-xdist worker to the controller
        report.user_properties.append(("cpu_seconds", round(_cpu_seconds() - item.stash[_CPU_START], 2)))


def pytest_terminal_summary(terminalreporter, config) -> None:
    if not run_slow(config):
        # Under pytest-xdist the workers collect (and leave the slow tests out); this process has no count.
        left = config.stash.get(_SLOW_LEFT, None)
        what = "slow tests" if left is None else f"{left} slow test{'s' * (left != 1)}"
        if left != 0:
            terminalreporter.write_sep("=", f"{what} not run: {SLOW_HOW}", yellow=True)
    n = config.getoption("cpu_durations")
    if n is None:
        return
    cpu = {
        r.nodeid: dict(r.user_properties)["cpu_seconds"]
        for reports in terminalreporter.stats.values()
        for r in reports
        if getattr(r, "when", None) == "teardown" and "cpu_seconds" in dict(r.user_properties)
    }
    terminalreporter.write_sep("=", f"CPU seconds per test (total {sum(cpu.values()):.1f} s over {len(cpu)} tests)")
    for nodeid, s in sorted(cpu.items(), key=lambda kv: -kv[1])[: n or None]:
        terminalreporter.write_line(f"{s:9.2f}s  {nodeid}")
