"""A plug-in that starts a thread when imported: its worker cannot fork lanes safely, so each lane
gets a fresh interpreter instead (the execution layer's fallback)."""

import os
import threading
import time

import numpy as np

_first = None

threading.Thread(target=lambda: time.sleep(3600), daemon=True).start()


def whoami(X, epsilon, rng):
    """[pid, crc of the first input's sum] as a vector release."""
    global _first
    if _first is None:
        _first = float(X.sum())
    return np.array([os.getpid(), _first], dtype=np.float64)
