# SPDX-License-Identifier: MIT
"""What a span costs in Python (bench/python.sh): pyspan_cost.py WHAT N

WHAT: span (`with leanprofiler.span("model.forward", phase="forward", module="encoder")`),
noop (the same `with` of bench/pynoop.c's no-op C context manager), spanned (a call of an
empty function decorated with @spanned of that name and metadata) or call (the same
function undecorated). Prints ns per iteration, the bare loop's own cost subtracted.
"""
import sys
import time

import leanprofiler
import pynoop

span, noop = leanprofiler.span, pynoop.noop


def loop_span(n):
    for _ in range(n):
        with span("model.forward", phase="forward", module="encoder"):
            pass


def loop_noop(n):
    for _ in range(n):
        with noop("model.forward", phase="forward", module="encoder"):
            pass


@leanprofiler.spanned("model.forward", phase="forward", module="encoder")
def spanned_f():
    pass


def plain_f():
    pass


def loop_spanned(n):
    for _ in range(n):
        spanned_f()


def loop_call(n):
    for _ in range(n):
        plain_f()


def loop_bare(n):
    for _ in range(n):
        pass


what, n = sys.argv[1], int(sys.argv[2])
run = globals()["loop_" + what]
run(min(n, 1000))  # the first calls: caches, the markers' warm-up when attached
t0 = time.perf_counter_ns()
loop_bare(n)
t1 = time.perf_counter_ns()
run(n)
t2 = time.perf_counter_ns()
print("%s: %s, %d spans, %.2f ns per span" % (
    what, "attached" if leanprofiler.active() else "not attached", n,
    ((t2 - t1) - (t1 - t0)) / n))
