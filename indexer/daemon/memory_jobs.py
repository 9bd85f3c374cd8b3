"""The store writer's jobs for one memory at a time: a restatement's reinforcement, an update's counters, a line of
the decision log, and the scheduled consolidation that proposes summaries."""

from __future__ import annotations

from indexer.memories import usage as counters
from indexer.memories.consolidate import propose
from indexer.notes import clock, decision_log
from indexer.providers.llm_review import summariser


class MemoryJobs:
    """Mixed into `StoreWriter` (its `_st`, `cfg`, `root`, `_log`): `_job_<name>` methods found by `Job` name."""

    def _job_reinforce(self, payload, reply):
        return counters.reinforce(self._st, payload)

    def _job_carry(self, payload, reply):
        return counters.carry(self._st, *payload)

    def _job_decision(self, payload, reply):
        decision_log.append(self.root, payload)

    def _job_consolidate(self, payload, reply):
        """The writer appends the proposals itself: it is this store's one writer."""
        result = propose([self._st], clock.today(self.cfg.timezone), self.cfg.consolidate_after_days,
                         lambda _store, event: decision_log.append(self.root, event), summariser(self.cfg))
        self._log.info("consolidate_pass", proposed=result["proposed"])
        return result
