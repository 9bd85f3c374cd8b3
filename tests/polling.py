"""Waiting on real file-system and daemon effects: poll a condition up to a deadline, no fixed sleeps."""

import time


def eventually(pred, timeout: float = 10.0, every: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(every)
    return pred()
