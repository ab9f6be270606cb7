"""A program that speaks dpaudit's protocol for programs (docs/executables.md), with one fault each: the fault
suite of the ``cmd:`` plug-in form.  Run as ``python faults.py MODE``; it is the audited program, not a module
the tests import.

Every mode but ``ignores-seed`` releases a replace-DP mean of the records clipped to [-15, 15]^d, from Python's
``random.Random(seed)`` per release, and faults (where they depend on the release) depend on its seed only:

``honest``          no fault;
``crash``           kills itself with SIGSEGV on about one release in 500;
``hang``            never answers a request;
``garbage``         writes a line that is not JSON instead of a reply whenever a request holds a seed that is
                    0 mod 400 (one release in 400: the auditor finds which by asking one seed at a time);
``ignores-seed``    draws from a generator seeded by the operating system;
``huge-allocation`` asks for 4 GiB on its first request (under ``--memory-limit 1G``: refused, it dies);
``errors``          answers {"error": ...} for a dataset of fewer than 5 records;
``bad-handshake``   writes a banner instead of the handshake;
``dies-at-start``   exits 3 before the handshake, with a message on stderr.
"""

import json
import os
import random
import signal
import sys
import time

LO, HI = -15.0, 15.0


def mean_release(data, n, d, eps, rng):
    records = max(n, 1)
    mean = [sum(min(max(row[j], LO), HI) for row in data) / records for j in range(d)]
    scale = d * (HI - LO) / (records * eps)
    return [m + scale * (rng.expovariate(1.0) - rng.expovariate(1.0)) for m in mean]


def main(mode):
    if mode == "dies-at-start":
        sys.stderr.write("faults.py: cannot find libdp.so\n")
        sys.exit(3)
    if mode == "bad-handshake":
        print("Welcome to the DP mean, version 1.0", flush=True)
    print(json.dumps({"protocol": "dpaudit/1", "output": "vector", "name": f"faults-{mode}"}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        seeds, n, d, eps = req["seeds"], req["n"], req["d"], req["epsilon"]
        if mode == "hang":
            time.sleep(3600)
        if mode == "huge-allocation":
            bytearray(4 << 30)
        if mode == "garbage" and any(s % 400 == 0 for s in seeds):
            print("oops: debug output on stdout", flush=True)
            continue
        if mode == "errors" and n < 5:
            print(json.dumps({"error": f"needs at least 5 records, got {n}"}), flush=True)
            continue
        releases = []
        for s in seeds:
            if mode == "crash" and s % 500 == 0:
                sys.stdout.flush()
                os.kill(os.getpid(), signal.SIGSEGV)
            rng = random.Random() if mode == "ignores-seed" else random.Random(s)
            releases.append(mean_release(req["data"], n, d, eps, rng))
        print(json.dumps({"releases": releases}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
