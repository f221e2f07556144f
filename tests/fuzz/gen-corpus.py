#!/usr/bin/env python3
# Writes the seed corpus of the fuzzers into tests/fuzz/corpus/<fuzzer>/ (checked in;
# rerun after changing bpf/wire.h, the summary JSON or the input formats described at the
# top of tests/fuzz/fuzz_decode.c and tests/fuzz/fuzz_meta.c).
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

ENTER, EXIT, STRING, THREAD, TASK, LIBS, USDT, SCHED_REC, SELF_STOP = 1, 2, 3, 4, 5, 6, 7, 8, 9
USDT_EXIT, USDT_ARGS, USDT_SLOTS = 0x1, 12, 4
NAME_LIT, META_LIT, HAS_COUNTER = 0x1, 0x2, 0x4
NAME_INLINE, META_INLINE, NO_META, SCHED = 0x100, 0x200, 0x400, 0x800
USDT_SCHED = 0x2
ABI1 = 1 << 12
STR_META = 0x1
STR_IN_FILE = 0x2
STR_AT_SITE = 0x4
FORK, THR, EXEC, TEXIT, FOUND = 1, 2, 3, 4, 5
GROUP_DEAD, NEW_IMAGE = 0x1, 0x2


def hdr(typ, flags, pid, tid, seq):
    return struct.pack('<HHIII', typ, flags, pid, tid, seq)


def chunk(rec):
    assert len(rec) < 0x8000
    return struct.pack('<H', len(rec)) + rec


def snap(cpu, runq, blocked, nvcsw=0, nivcsw=0, steal=0):
    """--off-cpu's struct lp_sched_snap: the thread's sums at the event."""
    return struct.pack('<6Q', cpu, runq, blocked, nvcsw, nivcsw, steal)


def event(typ, pid, tid, seq, ts, name=0, meta=0, flags=0, counter=0, name_text=None,
          meta_text=None, name_len=None, meta_len=None, file=0, pad=0, sched=None):
    """An enter/exit; name_text/meta_text make the strings inline; sched: snap() bytes."""
    flags |= ABI1
    text = b''
    if sched is not None:
        flags |= SCHED
        text += sched
    nl = ml = 0
    if name_text is not None:
        flags |= NAME_INLINE
        text += name_text
        nl = len(name_text) if name_len is None else name_len
        name = name or 0x7000
    if meta_text is not None:
        flags |= META_INLINE
        text += meta_text
        ml = len(meta_text) if meta_len is None else meta_len
        meta = meta or 0x7100
    rec = hdr(typ, flags, pid, tid, seq) + struct.pack('<QQQQHhhH', ts, counter, name, meta,
                                                         pad, nl, ml, file)
    return chunk(rec + text)


def string(pid, addr, text, meta=False, length=None, in_file=None, at_site=None):
    """in_file: (dev, ino, off) of a text the kernel could not read (LP_STR_IN_FILE);
    at_site: (file, site) of one it could not look up (LP_STR_AT_SITE)."""
    n = len(text) if length is None else length
    flags = ((STR_META if meta else 0) | (STR_IN_FILE if in_file else 0) |
             (STR_AT_SITE if at_site else 0))
    dev, ino, off = in_file or (0, 0, 0)
    file = 0
    if at_site:
        file, off = at_site
    return chunk(hdr(STRING, flags, pid, pid, 0) +
                 struct.pack('<QhH4xQQQ', addr, n, file, dev, ino, off) +
                 (text if n >= 0 else b''))


def thread(pid, tid, comm, pcomm):
    return chunk(hdr(THREAD, 0, pid, tid, 0) + struct.pack('<16s16s', comm, pcomm))


def task(what, pid, tid, ts, ppid=0, comm=b'', flags=0):
    return chunk(hdr(TASK, flags, pid, tid, 0) + struct.pack('<QII16s', ts, what, ppid, comm))


def libs(pid, ts, start=0, flags=0):
    return chunk(hdr(LIBS, flags, pid, pid, 0) + struct.pack('<QQ', ts, start))


def self_stop(pid, ts, start=0, sig=19):
    return chunk(hdr(SELF_STOP, sig, pid, pid, 0) + struct.pack('<QQ', ts, start))


def usdt(pid, tid, seq, ts, spec, exit=False, args=(), lens=(), text=b'', nargs=None,
         nstr=None, file=0, sched=None):
    """A span-pair probe record (struct lp_rec_usdt); nargs/nstr may lie; sched: snap()."""
    a = list(args) + [0] * (USDT_ARGS - len(args))
    ln = list(lens) + [0] * (USDT_SLOTS - len(lens))
    body = struct.pack('<QHHHBB', ts, spec, file, 0, len(args) if nargs is None else nargs,
                       len(lens) if nstr is None else nstr)
    body += struct.pack('<%dQ' % USDT_ARGS, *a) + struct.pack('<%dh' % USDT_SLOTS, *ln)
    flags = (USDT_EXIT if exit else 0) | (USDT_SCHED if sched is not None else 0)
    return chunk(hdr(USDT, flags, pid, tid, seq) + body + (sched or b'') + text)


def wait(pid, tid, off, wake, on):
    """--off-cpu: a thread off its CPU from off, asleep until wake, back at on."""
    return chunk(hdr(SCHED_REC, 0, pid, tid, 0) + struct.pack('<3Q', off, wake, on))


def gate(file, ns):
    return struct.pack('<HHQ', 0x8000, file, ns)


def process(pid, ns, open_before):
    return struct.pack('<HIQ', 0x8001 | (int(open_before) << 4), pid, ns)


def repeat(times):
    return struct.pack('<H', 0x8002 | (times << 4))


def threads(count):
    return struct.pack('<H', 0x8004 | (count << 4))


def collect(every):
    """Collect the texts nothing holds now, then after every `every`-th record (0: only now)."""
    return struct.pack('<H', 0x8003 | (every << 4))


def decode_seeds():
    s = {}
    lit = NAME_LIT | META_LIT
    s['nested_literals'] = b''.join([
        process(10, 900, False),
        thread(10, 10, b'nested', b'nested'),
        string(10, 0x1000, b'example.nested-spans'),
        string(10, 0x1020, b'model.forward'),
        string(10, 0x2000, b'phase=forward, module=encoder', meta=True),
        event(ENTER, 10, 10, 0, 1000, 0x1000, 0, lit | NO_META | HAS_COUNTER, counter=5),
        event(ENTER, 10, 10, 1, 1100, 0x1020, 0x2000, lit | HAS_COUNTER, counter=7),
        event(EXIT, 10, 10, 2, 1900, 0x1020, 0, NAME_LIT | HAS_COUNTER, counter=17),
        event(EXIT, 10, 10, 3, 2500, 0x1000, 0, NAME_LIT | HAS_COUNTER, counter=40),
    ])
    long_name = ('\u00e9' * 200).encode()  # 400 bytes: the cut at 256 splits nothing
    cut_name = b'a' + ('\u20ac' * 100).encode()  # the cut at 256 splits a 3-byte character
    s['inline_texts'] = b''.join([
        event(ENTER, 20, 21, 0, 50, name_text=b'model.forward',
              meta_text=b'k=\xc3\xa9, k=2, counter=5, bad=\xff\xfe, k#2=x, meta.counter=1'),
        event(ENTER, 20, 21, 1, 60, name_text=long_name[:257], name_len=257,
              flags=NO_META),
        event(ENTER, 20, 21, 2, 61, name_text=cut_name[:257], name_len=257,
              meta_text=b'x=\n\t\x1b[31m\xc2\x9b', flags=0),
        event(ENTER, 20, 21, 3, 62, name_text=b'', name_len=-14, flags=NO_META),
        event(EXIT, 20, 21, 4, 70, name_text=b'', name_len=-14),
        event(EXIT, 20, 21, 5, 80, name_text=cut_name[:257], name_len=257),
        event(EXIT, 20, 21, 6, 90, name_text=b'model.forward'),
        thread(20, 21, b'w\xc3\xb6rker\xff\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b',
               b'0123456789abcdef'),
    ])
    s['tasks'] = b''.join([
        process(30, 100, False),
        event(ENTER, 30, 30, 0, 110, name_text=b'parent', flags=NO_META),
        task(FORK, 31, 31, 120, ppid=30, comm=b'child'),
        task(THR, 30, 32, 125, comm=b'helper'),
        event(ENTER, 30, 32, 0, 126, name_text=b'in-thread', flags=NO_META),
        event(EXIT, 31, 31, 0, 130, name_text=b'parent'),
        task(TEXIT, 30, 32, 140),
        libs(30, 141, start=90),
        self_stop(29, 142, start=80),
        task(EXEC, 31, 31, 150, comm=b'exec\'ed'),
        event(ENTER, 31, 31, 1, 160, name_text=b'after-exec', flags=NO_META),
        task(TEXIT, 31, 31, 170, flags=GROUP_DEAD),
        task(FOUND, 40, 40, 180, comm=b'found', flags=NEW_IMAGE),
        task(FOUND, 41, 41, 181, comm=b'running'),
        event(EXIT, 41, 41, 0, 190, name_text=b'open-at-attach'),
        event(EXIT, 30, 30, 1, 200, name_text=b'parent'),
    ])
    s['attach_rebuild'] = b''.join([
        process(50, 1000, True),
        event(ENTER, 50, 50, 0, 1100, name_text=b'a', flags=NO_META),
        event(EXIT, 50, 50, 1, 1200, name_text=b'a'),
        event(EXIT, 50, 50, 2, 1300, name_text=b'outer'),
        gate(3, 1400),
        event(ENTER, 50, 50, 3, 1500, name_text=b'b', flags=NO_META),
        event(EXIT, 50, 50, 4, 1600, name_text=b'b'),
        event(EXIT, 50, 50, 5, 1700, name_text=b'lib.span', file=3),
        event(ENTER, 50, 51, 0, 1750, name_text=b'c', flags=NO_META),
        gate(4, 1800),
        event(EXIT, 50, 51, 1, 1900, name_text=b'lib2.span', file=4),
        event(EXIT, 50, 51, 2, 2000, name_text=b'c'),
    ])
    s['deep_repeat'] = b''.join([
        event(ENTER, 60, 60, 0, 10, name_text=b'deep', flags=NO_META | HAS_COUNTER,
              counter=1),
        repeat(1100),
        event(EXIT, 60, 60, 1101, 5000, name_text=b'deep', flags=HAS_COUNTER, counter=9),
        repeat(1100),
    ])
    s['lost_seq'] = b''.join([
        event(ENTER, 70, 70, 5, 10, name_text=b'x', flags=NO_META),
        event(ENTER, 70, 70, 9, 20, name_text=b'y', flags=NO_META),
        event(EXIT, 70, 70, 10, 30, name_text=b'y'),
        event(EXIT, 70, 70, 0xffffffff, 40, name_text=b'x'),
        event(ENTER, 70, 70, 0, 50, name_text=b'z', flags=NO_META),
    ])
    # Texts the kernel could not read, some said to be in a file (read through file_text).
    s['in_file'] = b''.join([
        string(90, 0x5000, b'', length=-14, in_file=(0x800001, 1234, 0x2000)),
        string(90, 0x5001, b'', length=-14, meta=True, in_file=(0x800001, 1234, 0x2008)),
        string(90, 0x5002, b'', length=-14, in_file=(0, 0, 0)),
        event(ENTER, 90, 90, 0, 10, 0x5000, 0x5001, NAME_LIT | META_LIT),
        event(ENTER, 90, 90, 1, 11, 0x5002, 0, NAME_LIT | NO_META),
        event(EXIT, 90, 90, 2, 12, 0x5002, 0, NAME_LIT),
        event(EXIT, 90, 90, 3, 13, 0x5000, 0, NAME_LIT),
    ])
    # Texts the kernel could not look up (another thread mapping): read from the marker's file.
    s['at_site'] = b''.join([
        string(91, 0x5000, b'', length=-14, at_site=(0, 0x401000)),
        string(91, 0x5001, b'', length=-14, meta=True, at_site=(3, 0x7f0000001000)),
        string(91, 0x5002, b'', length=-14, at_site=(0xffff, 0x401001)),
        event(ENTER, 91, 91, 0, 10, 0x5000, 0x5001, NAME_LIT | META_LIT),
        event(ENTER, 91, 91, 1, 11, 0x5002, 0, NAME_LIT | NO_META),
        event(EXIT, 91, 91, 2, 12, 0x5002, 0, NAME_LIT),
        event(EXIT, 91, 91, 3, 13, 0x5000, 0, NAME_LIT),
    ])
    s['fork_literals'] = b''.join([
        string(80, 0x4000, b'shared.literal'),
        string(80, 0x4001, b'odd.literal: the child reads nothing there'),
        task(FORK, 81, 81, 10, ppid=80, comm=b'kid'),
        task(FORK, 82, 82, 11, ppid=81, comm=b'grandkid'),
        string(82, 0x4000, b'', length=-14),
        string(82, 0x4002, b'', length=-14),
        string(82, 0x4003, b'', length=-14, meta=True),
        event(ENTER, 82, 82, 0, 20, 0x4000, 0x4003, NAME_LIT | META_LIT),
        string(82, 0x4001, b'', length=-14),
        event(ENTER, 82, 82, 1, 21, 0x4002, 0x9999, NAME_LIT | META_LIT),
        event(ENTER, 82, 82, 2, 22, 0x4001, 0, NAME_LIT | NO_META),
        event(EXIT, 82, 82, 3, 23, 0x4001, 0, NAME_LIT),
        event(EXIT, 82, 82, 4, 30, 0x4002, 0, NAME_LIT),
        event(EXIT, 82, 82, 5, 31, 0x4000, 0, NAME_LIT),
    ])
    s['malformed'] = b''.join([
        chunk(b''),
        chunk(b'\x01\x00'),
        chunk(hdr(ENTER, 0, 1, 1, 0) + b'\x00' * 8),
        chunk(hdr(9, 0, 1, 1, 0) + b'\x00' * 40),
        chunk(hdr(TASK, 0, 1, 1, 0)),
        chunk(hdr(STRING, 0, 1, 1, 0) + struct.pack('<Qh6x', 5, 300) + b'short'),
        event(ENTER, 1, 1, 0, 5, name_text=b'abc', name_len=200, meta_text=b'', meta_len=-2),
        event(EXIT, 1, 1, 1, 1, name_text=b'abc', name_len=200, flags=0xf000),
    ])
    items = ', '.join('k%d=v%d' % (i % 50, i) for i in range(80)).encode()
    s['many_items'] = b''.join([
        event(ENTER, 90, 90, 0, 100, name_text=b'items', meta_text=items[:513],
              meta_len=513),
        event(EXIT, 90, 90, 1, 200, name_text=b'items'),
        event(ENTER, 90, 90, 2, 300, name_text=b'items',
              meta_text=b'=v, k, ,, a=1=2 , a = 3 , a#2=4'),
        event(EXIT, 90, 90, 3, 400, name_text=b'items'),
    ])
    # A NUL inside a metadata key (only a corrupt record has one): "counter\0" must not
    # take the key of the profiler's own counter.
    s['nul_key'] = b''.join([
        event(ENTER, 95, 95, 0, 100, name_text=b'n', meta_text=b'counter\x00=5',
              flags=HAS_COUNTER, counter=1),
        event(EXIT, 95, 95, 1, 200, name_text=b'n', flags=HAS_COUNTER, counter=9),
    ])
    # Span-pair probe records: good, cut by the kernel, unreadable, lying lengths and
    # counts, one shorter than its fixed part.
    s['usdt'] = b''.join([
        usdt(97, 97, 0, 100, 0, args=(1, 2), lens=(6, -14), text=b'select'),
        usdt(97, 97, 1, 150, 0, lens=(513,), text=b'x' * 513),
        usdt(97, 97, 2, 160, 0, args=(5,), lens=(30000, 9, -1, 4), text=b'ab\x00cd',
             nargs=200, nstr=9),
        usdt(97, 97, 3, 170, 60000, exit=True),
        usdt(97, 97, 4, 200, 0, exit=True),
        chunk(hdr(USDT, 0, 97, 97, 5) + b'\x00' * 20),
    ])
    # Span-pair records through the matcher (fuzz_decode.c's SPECS: 0 query, 1 tx keyed,
    # 2 stmt reentry=close, 3 method with counted strings, 4 exception keyed arg0/arg1,
    # 5 gc literal name, 6 stmt again, 7 lock wait keyed).
    s['pairs_query'] = b''.join([
        process(100, 1000, False),
        thread(100, 100, b'postgres', b'postgres'),
        usdt(100, 100, 0, 1100, 0, args=(0x5000, 7, 0xbeef, 2**64 - 3), lens=(12,),
             text=b'select 1, 2;'),
        usdt(100, 100, 1, 1110, 2, args=(0x5100,), lens=(9,), text=b'select 3;'),
        usdt(100, 100, 2, 1120, 2, args=(0x5200,), lens=(513,), text=b'\xe2\x82\xac' * 171),
        usdt(100, 100, 3, 1130, 3, args=(0, 0x6000, 16, 0x6100, 6, 0x6200, 3),
             lens=(16, 6, 3), text=b'java/lang/StringcharAt(I)C'),
        usdt(100, 100, 4, 1140, 6, args=()),
        usdt(100, 100, 5, 1150, 3, exit=True),
        usdt(100, 100, 6, 1160, 2, exit=True),
        usdt(100, 100, 7, 1170, 0, exit=True),
        usdt(100, 100, 8, 1180, 2, args=(0x5300,), lens=(-14,)),
        usdt(100, 100, 9, 1190, 6, exit=True),
        usdt(100, 100, 10, 1200, 5, exit=True),
    ])
    s['pairs_keyed'] = b''.join([
        process(110, 2000, True),
        thread(110, 111, b'backend', b'postgres'),
        usdt(110, 111, 0, 2100, 1, args=(41,)),
        usdt(110, 111, 1, 2110, 0, args=(0x7000, 1), lens=(6,), text=b'begin;'),
        usdt(110, 111, 2, 2120, 0, exit=True),
        usdt(110, 111, 3, 2130, 1, args=(42,)),
        usdt(110, 111, 4, 2140, 4, args=(0xabc, 0x8000), lens=(13,), text=b'St11range_err'),
        usdt(110, 111, 5, 2150, 7, args=(9, 16384, 0, 0, 1, 8)),
        usdt(110, 111, 6, 2160, 1, exit=True, args=(41,)),
        usdt(110, 111, 7, 2170, 7, exit=True, args=(9,)),
        usdt(110, 111, 8, 2180, 4, exit=True, args=(0, 0xabc)),
        usdt(110, 111, 9, 2190, 1, exit=True, args=(99,)),
        usdt(110, 111, 10, 2200, 1, args=(43,)),
        usdt(110, 111, 11, 2210, 1, args=(44,)),
        task(TEXIT, 110, 111, 2300),
        usdt(110, 111, 0, 2400, 1, exit=True, args=(43,)),
        usdt(110, 110, 0, 2410, 1, args=(45,)),
        task(EXEC, 110, 110, 2420, comm=b'exec\'ed'),
        usdt(110, 110, 1, 2430, 1, exit=True, args=(45,)),
        usdt(110, 110, 2, 2440, 4, args=(1, 2), nstr=0),
        task(TEXIT, 110, 110, 2500, flags=GROUP_DEAD),
    ])
    s['pairs_mixed'] = b''.join([
        process(120, 3000, True),
        usdt(120, 120, 0, 3100, 5, exit=True, args=(1,)),
        event(ENTER, 120, 120, 1, 3110, name_text=b'stmt', flags=NO_META),
        usdt(120, 120, 2, 3120, 2, args=(0x9000,), lens=(4,), text=b'a,b='),
        usdt(120, 120, 3, 3130, 6),
        event(ENTER, 120, 120, 4, 3140, name_text=b'gc', flags=NO_META),
        usdt(120, 120, 5, 3150, 2, args=(0x9000,), lens=(4,), text=b'a,b='),
        usdt(120, 120, 6, 3160, 1, args=(7,)),
        repeat(300),
        usdt(120, 120, 307, 3500, 1, exit=True, args=(7,)),
        repeat(300),
        usdt(120, 120, 608, 3600, 0, args=(0x9100, 1), lens=(2,), text=b'x'),
        repeat(1100),
        usdt(120, 120, 1709, 9000, 60000, exit=True),
        event(EXIT, 120, 120, 1710, 9100, name_text=b'stmt'),
        usdt(120, 120, 1711, 9200, 6, exit=True),
    ])
    # A tid past 2^22 - 1 reaches into the track number: track 1 of 0x10000078 would be
    # track 65 of 0x78 (found by fuzz_decode; pairs.c skips such records).
    s['pairs_big_tid'] = b''.join([
        usdt(130, 0x78, 0, 100, 1, args=(1,)),
        repeat(70),
        usdt(130, 0x10000078, 0, 200, 1, args=(2,)),
        usdt(130, 0x10000078, 1, 300, 1, exit=True, args=(2,)),
        usdt(130, 0x78, 71, 400, 1, exit=True, args=(1,)),
    ])
    # 64 threads at once, then the same ones again: the thread tables grow while known
    # threads keep coming (the decoder once kept pointers into a table it had grown).
    s['many_threads'] = b''.join([
        process(10, 900, False),
        event(ENTER, 10, 1000, 0, 1000, name_text=b'w', flags=NO_META),
        threads(64),
        event(EXIT, 10, 1000, 1, 2000, name_text=b'w'),
        threads(64),
        # A thread exits, another gets its id and counts from 0 again.
        task(TEXIT, 10, 1001, 3000),
        event(ENTER, 10, 1001, 0, 4000, name_text=b'w', flags=NO_META),
        threads(64),
    ])
    # --off-cpu: snapshots on nested spans, a forced close, a span open at attach, a
    # snapshot out of order, span pairs with snapshots, the flag on a record too short.
    s['off_cpu'] = b''.join([
        process(150, 1000, True),
        event(ENTER, 150, 150, 0, 1100, name_text=b'a', flags=NO_META, sched=snap(0, 0, 0)),
        event(ENTER, 150, 150, 1, 1110, name_text=b'b', flags=NO_META, sched=snap(10, 0, 0)),
        wait(150, 150, 1120, 1150, 1190),
        wait(150, 150, 1190, 1180, 1195),
        wait(150, 150, 1196, 1196, 1196),
        wait(150, 999, 1120, 1150, 1190),
        chunk(hdr(SCHED_REC, 0, 150, 150, 0) + b'\x00' * 20),
        event(EXIT, 150, 150, 2, 1200, name_text=b'b', sched=snap(20, 30, 40, 1, 1)),
        event(ENTER, 150, 150, 3, 1210, name_text=b'c', flags=NO_META,
              sched=snap(30, 30, 40, 1, 1)),
        event(EXIT, 150, 150, 4, 1300, name_text=b'a', sched=snap(120, 30, 40, 1, 1, 7)),
        event(EXIT, 150, 150, 5, 1310, name_text=b'open.at.attach',
              sched=snap(130, 30, 40, 1, 1, 9)),
        event(ENTER, 150, 150, 6, 1320, name_text=b'd', flags=NO_META,
              sched=snap(2**64 - 1, 2**63, 5, 2**64 - 1, 0)),
        event(EXIT, 150, 150, 7, 1330, name_text=b'd', sched=snap(1, 2, 3)),
        event(ENTER, 150, 151, 0, 1400, name_text=b'e', flags=NO_META),
        event(EXIT, 150, 151, 1, 1500, name_text=b'e', sched=snap(100, 0, 0)),
        usdt(150, 150, 8, 1600, 1, args=(5,), sched=snap(200, 30, 40, 1, 1)),
        usdt(150, 150, 9, 1610, 0, args=(0x7000, 1), lens=(6,), text=b'begin;',
             sched=snap(210, 30, 40, 1, 1)),
        usdt(150, 150, 10, 1700, 1, exit=True, args=(5,), sched=snap(300, 30, 40, 2, 1)),
        chunk(hdr(ENTER, SCHED | ABI1, 150, 150, 11) + b'\x00' * 60),
        chunk(hdr(USDT, USDT_SCHED, 150, 150, 12) + b'\x00' * 130),
        task(TEXIT, 150, 151, 1800),
    ])
    # Collections: after every record, through literals re-sent after an exec, nested
    # runtime texts, thread and process names, keyed and unkeyed span pairs.
    s['collect_each'] = collect(1) + s['nested_literals'] + s['inline_texts'] + s['tasks']
    s['collect_pairs'] = collect(1) + s['pairs_keyed'] + s['pairs_query']
    s['collect_exec'] = b''.join([
        process(140, 100, False),
        string(140, 0x1000, b'before.exec'),
        string(140, 0x2000, b'meta=before', meta=True),
        event(ENTER, 140, 140, 0, 110, 0x1000, 0x2000, NAME_LIT | META_LIT),
        event(ENTER, 140, 140, 1, 111, name_text=b'runtime.1', meta_text=b'k=1'),
        collect(0),
        event(EXIT, 140, 140, 2, 112, name_text=b'runtime.1'),
        event(ENTER, 140, 140, 3, 113, name_text=b'runtime.2', meta_text=b'k=2'),
        collect(2),
        task(EXEC, 140, 140, 120, comm=b'new.image'),
        string(140, 0x1000, b'after.exec'),
        string(140, 0x2000, b'meta=after', meta=True),
        event(ENTER, 140, 140, 4, 130, 0x1000, 0x2000, NAME_LIT | META_LIT),
        event(ENTER, 140, 140, 5, 131, name_text=b'runtime.1', meta_text=b'k=1'),
        repeat(20),
        event(EXIT, 140, 140, 26, 200, 0x1000, 0, NAME_LIT),
        task(TEXIT, 140, 140, 300, flags=GROUP_DEAD),
    ])
    return s


def meta_seeds():
    def h(max_items, width, pad, outsz, ns):
        return struct.pack('<BBBBQ', max_items, width, pad, outsz, ns)

    s = {}
    s['basic'] = h(64, 40, 1, 168, 12170000) + b'phase=forward, module=encoder'
    s['spaces'] = h(8, 10, 0, 11, 999) + b'  a = 1 ,\tb\t=\t2  ,c=3,, ,verbose, =v, k='
    s['dups'] = h(3, 5, 1, 4, 999995) + b'a=1, a=2, a=3, b, a=4, c=5'
    s['rest'] = h(2, 3, 1, 200, 999995000) + b'x=1, y=2, z=3 ,w=4'
    s['utf8'] = (h(64, 7, 1, 9, 18446744073709551615) +
                 '\u00e9\u00e9\u00e9\u00e9=\u4e2d\u6587\U0001f600, k=\u20ac'.encode())
    s['invalid'] = (h(64, 40, 1, 168, 0) +
                    b'\xff\xfe=\xc0\xaf, \xed\xa0\x80=\xf4\x90\x80\x80, \xe2\x82, \xf0\x9f\x98')
    s['controls'] = h(64, 40, 0, 168, 1000) + b'a=\n\t\r\x1b[2J\x7f\xc2\x80\xc2\x9b\xc2\xa0\x00z'
    # Bidi controls, invisible characters, separators, BOM, a tag: shown as \uXXXX.
    s['invisible'] = (h(64, 40, 1, 168, 1000) +
                      'evil\u202egpj=\u00ad\u200b\u2066x\u2069, \ufeffk=\u2028\u2029\U000e0001'.encode())
    # A NUL inside a key: "counter\0x" must not come out as the reserved "counter".
    s['nul_key'] = h(64, 0, 2, 0, 0) + b'counter\x00x=1, a\x00=2, a=3'
    s['long'] = h(64, 40, 1, 168, 5) + ', '.join('key%d=value%d' % (i, i) for i in range(70)).encode()
    return s


def summary_row(name, meta, calls, self_ns, total_ns, p95, exact=True, hist=None):
    return {'name': name, 'meta_text': meta, 'meta': {}, 'calls': calls, 'self_ns': self_ns,
            'total_ns': total_ns, 'mean_ns': total_ns // calls, 'p95_ns': p95,
            'p95_exact': exact, 'min_ns': p95 // 2, 'max_ns': p95, 'self_counter': None,
            'total_counter': None, 'self_percent': 1.0, 'unterminated': 0,
            'started_before_recording': 0, 'uncertain': 0,
            'hist': hist or {'sub_bits': 7, 'buckets': [[2042, calls]],
                             'self_buckets': [[2040, calls]]}}


def summary_seeds():
    """Summaries as record writes them (user/core/report.c), for fuzz_summary."""
    base = {
        'schema': 'leanprofiler-summary/1', 'command': ['/bin/x'], 'mode': 'launch', 'pid': 7,
        'recording': {'start_ns': 1, 'end_ns': 30000000, 'end_reason': 'command exited'},
        'processes': [], 'exit_status': 0, 'counter_name': 'Lean heartbeats', 'events': 7,
        'threads': 2, 'window_ns': 18840000, 'recorded_thread_time_ns': 18840000,
        'counter_total': 290, 'unterminated_spans': 1, 'started_before_recording': 0,
        'uncertain_spans': 1, 'unmatched_exits': 2, 'too_deep_enters': 0, 'max_depth': 1024,
        'events_received': {'enter': 7, 'exit': 7},
        'lost_events': {'total': 3, 'enter': 1, 'exit': 2, 'string': 0, 'thread_record': 0,
                        'no_task_storage': 0, 'process_records': 0},
        'ring_buffer_bytes': 65536,
        'input': {'malformed_records': 0, 'truncated_strings': 0, 'unreadable_strings': 0},
        'resources': {'available': True, 'scope': 'launched', 'user_cpu_ns': 4000000,
                      'system_cpu_ns': 1, 'peak_rss_kib': None,
                      'voluntary_context_switches': 1, 'involuntary_context_switches': 2,
                      'until_exit': False},
        'profiler': {'available': True, 'user_cpu_ns': 1, 'system_cpu_ns': 2, 'peak_rss_kib': 3,
                     'end_to_figures_ns': 4, 'bpf_program_runs': 10,
                     'bpf_program_run_time_ns': 3170, 'processes_paused': 1,
                     'paused_total_ns': 5, 'paused_max_ns': 5, 'files_attached_late': 0},
        'span_pairs': {'specs': 1, 'reentry_closed': 0, 'unmatched_keyed_exits': 1,
                       'too_many_tracks': 0, 'too_deep_entries': 0, 'malformed_records': 0},
        'rows': [
            summary_row('model.forward', 'phase=forward, module=encoder', 3, 12410000,
                        12410000, 4170000),
            summary_row('input.load', 'phase=input', 3, 6390000, 6390000, 2140000, False),
            summary_row('example.nested-spans', '', 1, 41440, 18840000, 18840000),
        ],
        'thread_list': [{'pid': 7, 'tid': 7, 'name': 'nested', 'spans': 7,
                         'recorded_ns': 18840000, 'lost_events': 3, 'max_depth': 2}],
        'files': {'trace': 'build/leanprofiler-trace.json'},
        'table': {'profiler_line': True},
        'paths': {'max': 20000, 'kept': 3, 'folded_spans': 0, 'nodes': [
            {'parent': -1, 'name': 'example.nested-spans', 'calls': 1, 'total_ns': 18840000,
             'self_ns': 41440, 'folded': False},
            {'parent': 0, 'name': 'model.forward', 'calls': 3, 'total_ns': 12410000,
             'self_ns': 12410000, 'folded': False},
            {'parent': 0, 'name': '(other paths)', 'calls': 3, 'total_ns': 6390000,
             'self_ns': 6390000, 'folded': True},
        ]},
    }
    s = {'nested': json.dumps(base, indent=1).encode()}
    hostile = json.loads(json.dumps(base))
    hostile['counter_name'] = 'beats\x1b]0;t\x07'
    hostile['mode'] = 'attach'
    hostile['resources']['until_exit'] = True
    hostile['rows'][0]['name'] = 'a;b\n\u202e\x00\ufffd'
    hostile['paths']['nodes'][1]['name'] = 'a;b\n\u202e\x00'
    hostile['thread_list'][0]['name'] = '\x1b[2J'
    s['hostile'] = json.dumps(hostile).encode()
    old = json.loads(json.dumps(base))
    for k in ('paths', 'table', 'span_pairs'):
        del old[k]
    for r in old['rows']:
        del r['hist']
    s['before_paths'] = json.dumps(old).encode()
    s['newer'] = json.dumps(dict(base, schema='leanprofiler-summary/2')).encode()
    off = json.loads(json.dumps(base))
    off['off_cpu'] = {'spans_measured': 5, 'spans_partly_measured': 1, 'spans_not_measured': 1,
                      'steal_clock': 'kvm'}
    for r in off['rows']:
        r.update({'total_cpu_ns': r['total_ns'] // 2, 'total_runq_ns': r['total_ns'] // 4,
                  'total_blocked_ns': r['total_ns'] // 8, 'total_steal_ns': r['total_ns'] // 16,
                  'self_cpu_ns': 1, 'self_runq_ns': 2, 'self_blocked_ns': 3, 'self_steal_ns': 1,
                  'voluntary_switches': 4, 'involuntary_switches': 5})
        r['off_cpu_unmeasured_ns'] = r['total_ns'] - (r['total_cpu_ns'] + r['total_runq_ns'] +
                                                      r['total_blocked_ns'] + r['total_steal_ns'])
    off['thread_list'][0].update({'cpu_ns': 1, 'runq_ns': 2, 'blocked_ns': 3, 'steal_ns': 1,
                                  'voluntary_switches': 4, 'involuntary_switches': 5})
    s['off_cpu'] = json.dumps(off).encode()
    return s


def write(fuzzer, seeds):
    d = os.path.join(HERE, 'corpus', fuzzer)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name), 'wb') as f:
            f.write(data)


write('fuzz_decode', decode_seeds())
write('fuzz_meta', meta_seeds())
write('fuzz_summary', summary_seeds())
