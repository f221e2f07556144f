# SPDX-License-Identifier: MIT
"""A Python program with a known span tree, for tests/integration/test_python.c.

Usage: pyspans.py OUT [--wait [--import-first | --import-late]]
  --wait         print "ready" and wait for a line on stdin before marking anything
                 (the test attaches `record -p` meanwhile)
  --import-first import leanprofiler before printing "ready" (the default)
  --import-late  import leanprofiler only after that line (attached before the import)

It marks spans every way the leanprofiler module offers: `with span()` with keyword
metadata, @spanned on a recursive function, on coroutines (sequential awaits), spans
closed by exceptions, enter()/exit() with counters, in 3 threads besides the main one,
and runtime names with hostile bytes. Every span's four CLOCK_MONOTONIC readings, taken
just before and after its enter marker and its exit marker, go to OUT, one line per
span, each thread's spans in pre-order:
  tid depth t_before_enter t_after_enter t_before_exit t_after_exit counter NAME META
NAME and META are hex of the UTF-8 text the recording must show (docs/markers.md,
"Python", and docs/limits.md: cut at 256 bytes with "…", invalid bytes U+FFFD);
counter is the span's counter delta, or "-".
"""
import asyncio
import os
import sys
import threading
import time

now = time.monotonic_ns  # CLOCK_MONOTONIC, the clock of the recording's timestamps
NAME_MAX = 256  # LP_NAME_MAX (bpf/wire.h)
lock = threading.Lock()
records = []  # [tid, depth, t0, t1, t2, t3, counter, name, meta] in pre-order per thread
tl = threading.local()


def shown(raw):
    """The text a recording shows for a name given as bytes."""
    raw = raw.split(b"\0")[0]
    if len(raw) > NAME_MAX:
        cut = NAME_MAX
        while cut > 0 and (raw[cut] & 0xC0) == 0x80:  # never inside a character
            cut -= 1
        return raw[:cut].decode("utf-8", "replace") + "\u2026"
    return raw.decode("utf-8", "replace")


def raw_of(name):
    return name if isinstance(name, bytes) else name.encode("utf-8", "surrogateescape")


def meta_text(meta):
    """"k=v, k=v" as the module builds it: ',' in keys and values, '=' in keys, full width."""
    def item(s, is_key):
        s = str(s).replace(",", "\uff0c").replace("\0", "\ufffd")
        return s.replace("=", "\uff1d") if is_key else s
    return ", ".join(item(k, True) + "=" + item(v, False) for k, v in meta.items())


def depth():
    return getattr(tl, "depth", 0)


def begin(name, meta, t0, counter="-"):
    """A span's record, at its enter (t0 before the marker; the caller sets t1)."""
    rec = [threading.get_native_id(), depth(), t0, 0, 0, 0, counter, shown(raw_of(name)),
           meta_text(meta)]
    with lock:
        records.append(rec)
    tl.depth = depth() + 1
    return rec


def end(rec):
    tl.depth = depth() - 1


class logged:
    """`with leanprofiler.span(name, **meta)`, its markers bracketed by clock readings."""

    def __init__(self, name, **meta):
        self.span = lp.span(name, **meta)
        self.name, self.meta = name, meta

    def __enter__(self):
        t0 = now()
        self.span.__enter__()
        t1 = now()
        self.rec = begin(self.name, self.meta, t0)
        self.rec[3] = t1

    def __exit__(self, *exc):
        self.rec[4] = now()
        self.span.__exit__(*exc)
        self.rec[5] = now()
        end(self.rec)
        return False


# A decorated function: the caller's clock readings around the call bracket the wrapper's
# markers from outside, the body's own from inside (tl.t0 carries the first into the body).
def body_begin(name, meta):
    rec = begin(name, meta, tl.t0)
    rec[3] = now()
    return rec


def body_end(rec):
    rec[4] = now()
    end(rec)
    tl.last = rec


def call(fn, *args):
    tl.t0 = now()
    try:
        return fn(*args)
    finally:
        tl.last[5] = now()


async def acall(fn, *args):
    tl.t0 = now()
    try:
        return await fn(*args)
    finally:
        tl.last[5] = now()


def define_spanned():
    global fib, fetch, step, boom

    @lp.spanned("fib", kind="recursive")
    def fib(n):
        rec = body_begin("fib", {"kind": "recursive"})
        try:
            return n if n < 2 else call(fib, n - 1) + call(fib, n - 2)
        finally:
            body_end(rec)

    @lp.spanned
    async def fetch(i):  # named after the function: its __qualname__
        rec = body_begin(fetch.__qualname__, {})  # the name @spanned gives it
        await asyncio.sleep(0.001)  # the span goes on across awaits
        if i:
            await acall(step, i)
        body_end(rec)
        return i

    @lp.spanned("async.step", n=1)
    async def step(i):
        rec = body_begin("async.step", {"n": 1})
        await asyncio.sleep(0)
        body_end(rec)

    @lp.spanned("raises", where="decorated")
    def boom():
        rec = body_begin("raises", {"where": "decorated"})
        body_end(rec)
        raise KeyError("decorated")


def counters(work):
    """enter()/exit() with counters: the recording's counter is the difference."""
    t0 = now()
    lp.enter("counted", "unit=items", counter=work)
    t1 = now()
    rec = begin("counted", {"unit": "items"}, t0, str(7))
    rec[3] = t1
    rec[4] = now()
    lp.exit("counted", counter=work + 7)
    rec[5] = now()
    end(rec)


def exceptions(who):
    try:
        with logged("fails", who=who):
            with logged("inner.fails", depth=2):
                raise ValueError("closes both spans")
    except ValueError:
        pass
    try:
        call(boom)
    except KeyError:
        pass


def worker(index, rounds):
    with logged("thread.root", thread=index):
        for r in range(rounds):
            with logged("round", r=r, parity="odd" if r % 2 else "even", note="a, b=c"):
                call(fib, 1 + (index + r) % 5)
                counters(r * 100)
        exceptions("thread-%d" % index)


async def coroutines():
    for i in range(3):
        await acall(fetch, i)


HOSTILE = [
    "quote\"back\\slash", "tab\there\nnewline\x01ctl", "</script><b>x</b>",
    "emoji \U0001F600 \u00fcn\u00efc\u00f6d\u00e9", os.fsdecode(b"bad\xffbyte\xfe\xfdend"),
    "x" * 300, "\u00e9" * 200, b"raw\x80bytes", "nul\0after", "",
]


def hostile():
    for i, name in enumerate(HOSTILE):
        with logged(name, i=i, text="a,b=c\0d", **{"k,e=y": "\"v\""}):
            pass


def main():
    out = sys.argv[1]
    wait, late = "--wait" in sys.argv, "--import-late" in sys.argv
    global lp
    if not late:
        import leanprofiler as lp
    if wait:
        print("ready", flush=True)
        sys.stdin.readline()
    if late:
        import leanprofiler as lp
    define_spanned()
    with logged("main", python="%d.%d" % sys.version_info[:2]):
        threads = [threading.Thread(target=worker, args=(i, 12)) for i in range(3)]
        for t in threads:
            t.start()
        worker(-1, 4)
        for t in threads:
            t.join()
        asyncio.run(coroutines())
        exceptions("main")
        hostile()
    with open(out, "w") as f:
        for r in records:
            f.write("%d %d %d %d %d %d %s %s %s\n" % (*r[:7], r[7].encode().hex() or "-",
                                                    r[8].encode().hex() or "-"))


main()
