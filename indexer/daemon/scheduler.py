"""Periodic jobs of the daemon (the only module importing apscheduler); jobs only enqueue work."""

from __future__ import annotations

from apscheduler.schedulers.background import BackgroundScheduler

from indexer.config import Config

JOBS = ("reconcile", "decay", "cleanup", "consolidate")


class Scheduler:
    """reconcile / decay / cleanup / consolidate at the configured intervals, each calling enqueue(job_name)."""

    def __init__(self, cfg: Config, enqueue):
        self._enqueue = enqueue
        # coalesce: after a suspend, missed runs collapse into one; max_instances=1: never stack up
        self._sched = BackgroundScheduler(job_defaults={"coalesce": True, "max_instances": 1,
                                                        "misfire_grace_time": 3600})
        self._cfg = cfg

    def start(self) -> None:
        self._add_jobs(self._cfg)
        self._sched.start()

    def reload(self, cfg: Config) -> None:
        """New intervals after SIGHUP; each job's clock restarts from now."""
        self._cfg = cfg
        for name in JOBS:
            if self._sched.get_job(name):
                self._sched.remove_job(name)
        self._add_jobs(cfg)

    def intervals(self) -> dict[str, float]:
        return {name: _minutes(self._cfg, name) for name in JOBS}

    def stop(self) -> None:
        if self._sched.running:
            self._sched.shutdown(wait=False)

    def _add_jobs(self, cfg: Config) -> None:
        for name in JOBS:
            self._sched.add_job(self._enqueue, "interval", args=[name], id=name, name=name,
                                minutes=_minutes(cfg, name), replace_existing=True)


def _minutes(cfg: Config, name: str) -> float:
    return float(getattr(cfg, f"{name}_minutes"))
