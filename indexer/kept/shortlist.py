"""What the two halves of a kept-vector search pass between them, and the unit vector both start from."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32).reshape(-1)
    return v / (np.linalg.norm(v) or 1.0)


@dataclass(frozen=True)
class Shortlist:
    """A search's rows (matrix rows, or vec0 rowids for IVF lists) and their approximate cosines,
    before the close ones are settled; generation tells whether matrix rows moved in between."""

    generation: int
    q: np.ndarray
    k: int
    rows: np.ndarray
    sims: np.ndarray
    # the place whose neighbours get exact cosines: the caller's last hit (a pool of 50 candidates for a
    # search that shows 10 settles at 10; settling near the 50th read up to 64 vectors from sqlite-vec,
    # 10 ms a query at 1M rows, and changed nothing a caller sees)
    settle_at: int | None = None

    @property
    def settle(self) -> int:
        return min(self.k, self.settle_at or self.k)
