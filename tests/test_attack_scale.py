"""Every attack at 10⁶ × 2 records in bounded memory (slow tier).

Each attack runs one repeat of the attack game (``benchmarks/bench_attack_scale.py
--case 1000000 ATTACK``) in a child process whose address space is capped
with RLIMIT_AS, so a members × prior matrix or any other blow-up ends in a
MemoryError instead of a swapping machine; the child's own peak resident set
must then be ≤ 2 GiB.  The cap is 2 GiB plus 0.5 GiB: the interpreter,
NumPy, SciPy, scikit-learn and ART reserve ~0.25 GiB of address space that
never becomes resident (VmPeak − peak RSS measured at 10⁴ records), and
glibc reserves arenas it may not touch.  Wall time is not asserted (the
benchmark records it); the timeout only stops a hang.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_attack_scale.py"
GIB = 2**30
PEAK_RSS_LIMIT = 2 * GIB
ADDRESS_SPACE_LIMIT = PEAK_RSS_LIMIT + GIB // 2


def _cap_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))


@pytest.mark.slow
@pytest.mark.parametrize("attack", ["reconstruction", "yeom", "shokri", "label-only", "lira", "rmia"])
def test_attack_on_a_million_records_in_bounded_memory(attack: str) -> None:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(BENCH), "--case", "1000000", attack], env=env,
                          capture_output=True, text=True, timeout=1800, preexec_fn=_cap_address_space)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["records"] == 1_000_000 and res["peak_rss_mb"] * 2**20 <= PEAK_RSS_LIMIT, res
    num = res["numbers"]
    if attack == "reconstruction":
        assert num["n_records"] > 120_000 and num["success_rate"] > 2 * num["baseline_success_rate"]
        assert num["denoising"]["public_subsample"] > 0 and "success_rate_se" in num["baseline"]
    else:
        assert 0.0 <= num["auc"] <= 1.0 and num["epsilon_lower_bound"] >= 0.0
