"""The pure parts of the fleet load test (benchmarks/fleet.py and its worker, fleet_worker.py): the day's
deliveries, the failures injected, the figures, the fake GitHub's shards, the stub engine's report."""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from support.paths import BENCHMARKS
from werkzeug.test import Client

from difforacle.bot.app.runner import OUT, PROGRESS_NAME, REPORT_NAME
from difforacle.bot.app.sandbox import Mount, SandboxRequest
from difforacle.bot.progress import read_progress_file
from difforacle.generator import validate_report


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


fleet_worker = _load("fleet_worker")
fleet = _load("fleet")


# ------------------------------------------------------------------ the day

def test_the_hourly_rates_average_one_and_peak_at_the_given_ratio() -> None:
    rates = fleet.hourly_rates(3.0)
    assert len(rates) == 24
    assert sum(rates) / 24 == pytest.approx(1.0)
    assert max(rates) == pytest.approx(3.0)
    assert min(rates) > 0  # the night is quiet, not empty
    with pytest.raises(ValueError, match="too high"):
        fleet.hourly_rates(20.0)


def test_a_days_worth_spans_the_day_and_fewer_are_centred_on_the_peak() -> None:
    rates = fleet.hourly_rates(3.0)
    assert fleet.window(rates, 10_000, 10_000) == (0.0, fleet.DAY)
    start, end = fleet.window(rates, 10_000, 300)
    assert fleet.expected(rates, 10_000, start, end) == pytest.approx(300, rel=1e-3)
    busiest = rates.index(max(rates))
    assert (start + end) / 2 == pytest.approx((busiest + 0.5) * fleet.HOUR)
    # all within the busiest hour: 3x the mean rate of 10,000 a day
    assert end - start == pytest.approx(300 / (3 * 10_000 / fleet.DAY))


def test_arrivals_follow_the_hourly_rates() -> None:
    rates = [0.0] * 24
    rates[2], rates[3] = 1.0, 3.0
    times = fleet.arrivals(rates, 0.0, fleet.DAY, 4_000, random.Random(1))
    assert times == sorted(times)
    hours = Counter(int(t // fleet.HOUR) for t in times)
    assert set(hours) == {2, 3}
    assert hours[3] / hours[2] == pytest.approx(3.0, rel=0.15)


def test_pull_requests_push_in_bursts_and_close_after_their_last_push() -> None:
    load = fleet.Load(prs=400)
    plans, length = fleet.plan_pulls(load, random.Random(7))
    assert plans == fleet.plan_pulls(load, random.Random(7))[0]  # a seed gives the same day
    assert sum(p.opened >= 0 for p in plans) == 400
    early = [p for p in plans if p.opened < 0]  # opened before the window, their pushes in it
    assert len(early) > 400 and min(p.opened for p in early) >= -fleet.LEAD_IN
    assert any(t >= 0 for p in early for t in p.pushes)
    assert [p.opened for p in plans] == sorted(p.opened for p in plans)
    assert all(p.opened >= 0 for p in fleet.plan_pulls(fleet.Load(prs=10_000), random.Random(7))[0])
    gaps = [b - a for p in plans for a, b in zip(p.pushes, p.pushes[1:], strict=False)]
    assert any(gap <= load.burst_gap[1] for gap in gaps)  # several pushes in quick succession
    for plan in plans:
        assert all(plan.opened <= t < length for t in plan.pushes)
        assert list(plan.pushes) == sorted(plan.pushes)
        assert plan.closed is None or max((plan.opened, *plan.pushes)) <= plan.closed < length
        assert 0 <= plan.installation < load.installations and 0 <= plan.repo < load.repos
    by_installation = Counter(p.installation for p in plans)
    assert by_installation[0] > by_installation[load.installations - 1]


def test_every_pull_request_is_opened_pushed_and_closed_in_order_with_some_redelivered() -> None:
    load = fleet.Load(prs=500, redeliver_share=0.1)
    rng = random.Random(3)
    plans, length = fleet.plan_pulls(load, rng)
    deliveries = fleet.plan_deliveries(plans, load, length, rng)
    assert [d.at for d in deliveries] == sorted(d.at for d in deliveries)
    assert deliveries[0].at >= 0  # nothing of what happened before the window
    kinds = Counter(d.kind for d in deliveries)
    assert kinds["opened"] == 500
    assert kinds["synchronize"] == sum(t >= 0 for p in plans for t in p.pushes)
    assert kinds["closed"] == sum(p.closed is not None and p.closed >= 0 for p in plans)
    assert kinds["redelivery"] > 0
    first_seen: dict[str, float] = {}
    for delivery in deliveries:
        if delivery.kind == "redelivery":
            assert first_seen[delivery.id] < delivery.at  # the same id, later
        else:
            assert delivery.id not in first_seen
            first_seen[delivery.id] = delivery.at
    plan = next(p for p in plans if p.opened >= 0 and p.pushes)
    heads = [d.head for d in deliveries if d.kind == "synchronize" and d.pull == plan.index]
    assert heads == list(range(1, len(plan.pushes) + 1))


def test_killed_workers_come_back_and_one_is_always_up() -> None:
    steps = fleet.plan_chaos(100.0, 3, 5.0, 4.0, random.Random(2))
    assert [s.action for s in steps].count("redis") == 1
    assert next(s for s in steps if s.action == "redis").at == 50.0
    kills = [s for s in steps if s.action == "kill"]
    assert len(kills) > 5
    for kill in kills:
        assert fleet.ChaosStep(kill.at + 4.0, "start", kill.worker) in steps
    down: set[int] = set()
    for step in steps:
        if step.action == "kill":
            down.add(step.worker)
        elif step.action == "start":
            down.discard(step.worker)
        assert len(down) < 3
    assert fleet.plan_chaos(100.0, 3, 0.0, 4.0, random.Random(2), redis=False) == []


# ------------------------------------------------------------------ the figures

def test_percentiles_and_the_busiest_window() -> None:
    assert fleet.percentile([3.0, 1.0, 2.0, 4.0], 0.5) == 2.0
    assert fleet.percentile(list(range(1, 101)), 0.95) == 95
    assert fleet.percentile(list(range(1, 101)), 0.07) == 7  # 0.07 * 100 is 7.000000000000001
    assert fleet.percentile([5.0], 0.0) == 5.0
    assert fleet.percentile([], 0.5) != fleet.percentile([], 0.5)  # NaN
    assert fleet.peak_in_window([0, 1, 2, 10, 10.5, 11, 11.9], 2.0) == 4
    assert fleet.peak_in_window([], 1.0) == 0
    assert fleet.hourly_peak([float(t) for t in range(0, 7200, 2)], 7200) == 1800
    assert fleet.hourly_peak([float(t) for t in range(0, 600, 2)], 600) == 1800  # scaled from 10 minutes


def test_what_became_of_each_head() -> None:
    heads = {"a0": (0, 0, False, False), "a1": (0, 1, False, False), "a2": (0, 2, False, False),
             "a3": (0, 3, False, False), "a4": (0, 4, True, False),  # pull 0: four superseded, one final
             "b0": (1, 0, True, False),  # lost
             "c0": (2, 0, True, True)}  # closed: nothing owed
    sent = {sha: 100.0 for sha in heads}
    runs = [fleet.RunSeen("a0", "cancelled", "Superseded", (("cancelled", 105.0),)),
            fleet.RunSeen("a1", "neutral", "no differences", (("neutral", 103.0),)),
            fleet.RunSeen("a2", None, ""),  # created, never completed
            fleet.RunSeen("a4", "neutral", "no differences", (("neutral", 112.0), ("neutral", 130.0))),
            fleet.RunSeen("b0", "cancelled", "Superseded", (("cancelled", 101.0),))]
    outcomes = fleet.assess(heads, sent, runs, {0: 1, 1: 2, 2: 0}, lambda sha: sha == "a4")
    assert outcomes.final_heads == 2
    assert outcomes.lost == ["b0"]
    assert outcomes.latencies == outcomes.peak_latencies == [12.0]  # the first completion counts
    assert outcomes.superseded == Counter({"cancelled": 1, "checked before the next push": 1,
                                           "left in progress": 1, "never started": 1})
    assert outcomes.stuck == ["a2"]
    assert outcomes.duplicated_comments == 1
    assert outcomes.duplicated_check_runs == 0


def test_the_phases_of_a_job_come_from_the_apps_logs() -> None:
    def lines(*entries: tuple[str, str]) -> str:
        return "\n".join(f"2026-01-01 10:00:{at} INFO difforacle.app.runner: {text}" for at, text in entries)

    receiver = lines(("00,000", "delivery d1: pull_request opened queued o/r#1@a"),
                     ("00,500", f"delivery d2: pull_request opened queued {fleet.BURST_OWNER}/r#9@b"))
    worker = lines(("01,000", "job o/r#1@a: fetching with a token for o/r only"),
                   ("01,500", "job o/r#1@a: fetching with a token for o/r only"),
                   ("02,000", "job o/r#1@a: dependencies installed in the stub sandbox in 0.25 s"),
                   ("04,000", "job o/r#1@a: the engine ran in the stub sandbox in 1.75 s"),
                   ("04,250", "job o/r#1@a: published: 0 difference(s), neutral"),
                   ("05,000", f"job {fleet.BURST_OWNER}/r#9@b: fetching with a token"),
                   ("06,000", f"job {fleet.BURST_OWNER}/r#9@b: published: 0 difference(s)"))
    phases = fleet.job_phases(receiver, [worker])
    assert phases["wait"] == [pytest.approx(1.5)]  # to the run that published, not the first
    assert phases["sandbox"] == [pytest.approx(2.0)]
    assert phases["rest"] == [pytest.approx(0.75)]
    assert fleet.count_log(worker)["jobs published"] == 2


def test_the_table_says_what_was_lost() -> None:
    result = fleet.Result(prs=10, window_hours=0.5, compression=10, workers=2, slots=4, deliveries=14,
                          latency={"p50": 5.0, "p95": 9.0, "max": 12.0, "peak_p95": 9.0, "p50_real": 50.0,
                                   "p95_real": 90.0, "max_real": 120.0, "peak_p95_real": 90.0,
                                   "measured": 9, "at_peak": 9},
                          lost=1, final_heads=10, requests_per_pr={"installation": 12.0, "app_jwt": 2.0},
                          peak_per_hour={"org0": 6000}, hour_observed=30.0,
                          harness_lag={"p95_s": 0.01, "max_s": 0.1},
                          receiver_day={"p50_ms": 5.0, "p95_ms": 9.0, "max_ms": 30.0, "status_202": 13,
                                        "status_0": 1},
                          lost_heads=[{"job": "o/r#1@a", "delivery": "d1",
                                       "answers": ["503", "200 duplicate"]}])
    args = argparse.Namespace(lease=6.0, engine_median=40.0, burst=0, burst_seconds=10.0)
    text = fleet.table(result, args)
    assert "| deliveries lost (final heads without a completed check run) | **1** of 10 |" in text
    assert "5.00 / 9.00 / 12.00 s (50 / 90 / 120 s real-day)" in text
    assert "13x 202, 1x no answer" in text
    assert "org0 6,000 (the busiest 30 real-day minutes, scaled to an hour)" in text
    assert "lost: o/r#1@a: delivery d1 answered 503, then 200 duplicate" in text


# ------------------------------------------------------------------ the fake GitHub's shards

def test_each_request_sees_its_repositorys_shard_and_is_logged() -> None:
    fake = fleet.FleetGitHub()
    for name, head in (("a", "1" * 40), ("b", "2" * 40)):
        with fake.shard(f"o/{name}"):
            fake.add_pull("o", name, 1, "0" * 40, head)
    fake.add_token("t", "someone")
    client = Client(fake)
    auth = {"Authorization": "token t"}
    assert client.get("/repos/o/a/pulls/1", headers=auth).json["head"]["sha"] == "1" * 40
    assert client.get("/repos/o/b/pulls/1", headers=auth).json["head"]["sha"] == "2" * 40
    assert client.get("/repos/o/c/pulls/1", headers=auth).status_code == 404
    assert [(inst, op, status) for _, inst, op, status in fake.requests] == [
        (None, "pulls/get", 200), (None, "pulls/get", 200), (None, "pulls/get", 404)]


def test_the_pull_requests_ref_tells_its_head_as_git_traffic() -> None:
    fake = fleet.FleetGitHub()
    with fake.shard("o/a"):
        fake.add_pull("o", "a", 1, "0" * 40, "1" * 40)
    fake.add_token("t", "someone")
    client = Client(fake)
    basic = {"Authorization": "Basic eC1hY2Nlc3MtdG9rZW46dA=="}  # x-access-token:t
    answer = client.get("/o/a.git/refs/pull/1/head", headers=basic)
    assert (answer.status_code, answer.text) == (200, "1" * 40 + "\n")
    assert client.get("/o/a.git/refs/pull/2/head", headers=basic).status_code == 404
    assert client.get("/o/a.git/refs/pull/1/head").status_code == 401
    assert [(op, status) for _, _, op, status in fake.requests] == [
        (fleet.GIT_OPERATION, 200), (fleet.GIT_OPERATION, 404), (fleet.GIT_OPERATION, 401)]


# ------------------------------------------------------------------ the stub engine

def test_the_stub_engine_writes_a_valid_report_and_its_progress(tmp_path: Path) -> None:
    times = fleet_worker.StubTimes(compression=1e4, engine_median=40.0, differences=1.0)
    sandbox = fleet_worker.StubSandbox(times, random.Random(0))
    argv = ["python", "-m", "difforacle.bot", "diff", "--base", "a" * 40, "--head", "b" * 40]
    result = sandbox.run(SandboxRequest(argv=argv, mounts=[Mount(tmp_path, OUT, read_only=False)]))
    assert (result.sandbox, result.exit_code) == ("stub", 1)
    report = json.loads((tmp_path / REPORT_NAME).read_text())
    validate_report(report)
    assert [(d["path"], d["line"]) for d in report["differences"]] == [
        (fleet_worker.CHANGED_PATH, fleet_worker.CHANGED_LINE)]
    assert read_progress_file(tmp_path / PROGRESS_NAME).phase == "exploring"
    assert sandbox.run(SandboxRequest(argv=["sh"], egress=tmp_path / "egress.sock")).exit_code == 0  # install
    assert fleet_worker.stub_report("a" * 40, "b" * 40, 1.0, 0.0)["differences"] == []


def test_the_stub_engine_stops_when_asked(tmp_path: Path) -> None:
    times = fleet_worker.StubTimes(compression=1.0, engine_median=40.0, differences=1.0)
    sandbox = fleet_worker.StubSandbox(times, random.Random(0))
    argv = ["python", "-m", "difforacle.bot", "diff", "--base", "a" * 40, "--head", "b" * 40]
    stop = threading.Event()
    stop.set()  # a new push came as it started: it stops at its first pause, not 40 s later
    result = sandbox.run(SandboxRequest(argv=argv, mounts=[Mount(tmp_path, OUT, read_only=False)], stop=stop))
    assert result.cancelled and result.exit_code is None and result.seconds < 5
    assert not (tmp_path / REPORT_NAME).exists()


def test_the_changed_line_is_an_added_line_of_the_patch() -> None:
    from support.fake_github import PullFile

    diff = PullFile(fleet_worker.CHANGED_PATH, patch=fleet_worker.PATCH)
    line = diff.find(fleet_worker.CHANGED_LINE, "RIGHT")
    assert line is not None and line.kind == "+"
