"""The daemon's scheduler, driven by a clock the test moves: each job enqueued at its interval, never stacked."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from indexer.config import Config
from indexer.daemon.scheduler import JOBS, Scheduler

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(tmp_path, **minutes):
    cfg = dataclasses.replace(Config(home=tmp_path), **{f"{k}_minutes": v for k, v in minutes.items()})
    clock, asked = Clock(), []
    return Scheduler(cfg, asked.append, clock=clock), clock, asked


def test_each_job_is_enqueued_at_its_interval_by_the_clock(tmp_path):
    sched, clock, asked = make(tmp_path, reconcile=10, decay=60, cleanup=1440, consolidate=1440, capture=1440)
    assert sched.run_due() == [] and sched.next_in() == 600
    clock.now += 599
    assert sched.run_due() == []
    clock.now += 1
    assert sched.run_due() == ["reconcile"]
    clock.now += 50 * 60  # an hour after the start: reconcile's sixth interval and decay's first
    assert sched.run_due() == ["reconcile", "decay"]
    clock.now += 23 * 3600
    assert sched.run_due() == list(JOBS)
    assert asked == ["reconcile", "reconcile", "decay", "reconcile", "decay", "cleanup", "consolidate", "capture"]


def test_a_long_pause_runs_each_late_job_once_then_keeps_its_interval(tmp_path):
    sched, clock, asked = make(tmp_path, reconcile=10, decay=60, cleanup=1440, consolidate=1440, capture=1440)
    clock.now += 10 * 3600  # sixty reconcile intervals missed
    assert sched.run_due() == ["reconcile", "decay"]
    assert sched.run_due() == [] and sched.next_in() == 600
    assert asked == ["reconcile", "decay"]


def test_reload_restarts_every_clock_from_now(tmp_path):
    sched, clock, asked = make(tmp_path, reconcile=10, decay=60, cleanup=1440, consolidate=1440, capture=1440)
    clock.now += 590
    sched.reload(dataclasses.replace(Config(home=tmp_path), reconcile_minutes=1.0))
    assert sched.intervals()["reconcile"] == 1.0
    clock.now += 59
    assert sched.run_due() == []
    clock.now += 1
    assert sched.run_due() == ["reconcile"] and asked == ["reconcile"]


def test_a_job_that_cannot_be_enqueued_leaves_the_others_and_the_next_interval(tmp_path):
    cfg = Config(home=tmp_path)
    clock, asked = Clock(), []

    def enqueue(name):
        if name == "reconcile":
            raise RuntimeError("writer stopped")
        asked.append(name)

    sched = Scheduler(cfg, enqueue, clock=clock)
    clock.now += 3600
    assert sched.run_due() == ["reconcile", "decay", "capture"] and asked == ["decay", "capture"]
    assert sched.next_in() == 600


def test_the_thread_enqueues_on_the_real_clock_and_stops(tmp_path):
    cfg = dataclasses.replace(Config(home=tmp_path), reconcile_minutes=0.0005)  # 30 ms
    seen = threading.Event()
    sched = Scheduler(cfg, lambda name: seen.set() if name == "reconcile" else None)
    sched.start()
    try:
        assert seen.wait(timeout=30)
    finally:
        sched.stop()
    assert not sched._thread.is_alive()
