#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An independent reading of leanprofiler's Perfetto traces, for the tests.

The file's compressed_packets are inflated here (zlib), and the packets inside
are decoded by protoc against tests/perfetto/trace.proto (our transcription of
Perfetto's protos), never by leanprofiler's own reader. The slices are then
rebuilt as Perfetto's trace processor does: per track, events sorted by time
(equal times in file order), a BEGIN opening a slice, an END closing the latest
open one.

  pftrace.py decode FILE.pftrace            the trace as JSON (slices, names, otherData)
  pftrace.py compare FILE.pftrace JSON      every slice, track name and argument the same
                                            as the JSON trace's (same recording); exit 1
                                            with one line per difference
  pftrace.py stats FILE.pftrace             packets, sequences, bytes (JSON): the file's,
                                            the packets' inflated (raw_bytes), and of
                                            these the descriptors' and attributes'
                                            (written at the end: end_bytes)
  pftrace.py same RECORDED.pftrace CONVERTED.pftrace
                                            report --format perfetto's file against record's
                                            for the same recording: "identical" (byte for
                                            byte), else every slice (depth included), name
                                            and otherData compared, and the waits each file
                                            places out of time order counted; exit 1 with
                                            one line per difference
"""
import json
import os
import subprocess
import sys
import zlib
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
CLOCK_MONOTONIC = 3
SEQ_CLEARED = 1


def fail(msg):
    print("pftrace.py: " + msg, file=sys.stderr)
    sys.exit(2)


def varint(b, i):
    r = s = 0
    while True:
        if i >= len(b):
            fail("a varint runs past the end")
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def inflate_trace(data):
    """The Trace's packets, each compressed_packets one replaced by the packets in it."""
    out = bytearray()
    i = 0
    compressed = 0
    while i < len(data):
        key, i = varint(data, i)
        if key != (1 << 3 | 2):
            fail("a top-level field other than Trace.packet: key %d" % key)
        n, i = varint(data, i)
        pkt = data[i:i + n]
        i += n
        j = 0
        k, j = varint(pkt, j)
        if k == (50 << 3 | 2):  # TracePacket.compressed_packets, alone in its packet
            m, j = varint(pkt, j)
            if j + m != len(pkt):
                fail("a compressed packet with other fields")
            out += zlib.decompress(pkt[j:j + m])
            compressed += 1
        else:
            out += data[i - n - len(encode_varint(n)) - 1:i]
    return bytes(out), compressed


def end_bytes(inner):
    """Bytes of the packets of track descriptors (60) and trace attributes (126), framed."""
    total = i = 0
    while i < len(inner):
        start = i
        _, i = varint(inner, i)
        n, i = varint(inner, i)
        pkt, i = inner[i:i + n], i + n
        j, fields = 0, set()
        while j < len(pkt):
            key, j = varint(pkt, j)
            wire = key & 7
            if wire == 0:
                _, j = varint(pkt, j)
            elif wire == 2:
                m, j = varint(pkt, j)
                j += m
            else:
                j += 8 if wire == 1 else 4
            fields.add(key >> 3)
        if fields & {60, 126}:
            total += i - start
    return total


def encode_varint(v):
    b = bytearray()
    while v >= 0x80:
        b.append(v & 0x7F | 0x80)
        v >>= 7
    b.append(v)
    return bytes(b)


# ---- protoc's text format ----

def unescape(s):
    """protoc's C-escaped bytes (octal, \\n...) back to bytes."""
    out = bytearray()
    i = 0
    simple = {"n": 10, "r": 13, "t": 9, '"': 34, "'": 39, "\\": 92, "a": 7, "b": 8, "f": 12,
              "v": 11, "?": 63}
    raw = s.encode("latin-1") if all(ord(c) < 256 for c in s) else s.encode("utf-8")
    while i < len(raw):
        c = raw[i]
        if c != 92:
            out.append(c)
            i += 1
            continue
        e = chr(raw[i + 1])
        if e in simple:
            out.append(simple[e])
            i += 2
        elif e in "01234567":
            j = i + 1
            while j < len(raw) and j < i + 4 and chr(raw[j]) in "01234567":
                j += 1
            out.append(int(raw[i + 1:j], 8))
            i = j
        elif e == "x":
            j = i + 2
            while j < len(raw) and chr(raw[j]) in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(raw[i + 2:j], 16))
            i = j
        else:
            fail("unknown escape \\%s" % e)
    return bytes(out)


def parse_text(text):
    """protoc's text output: each message a dict of field -> list of values."""
    root = {}
    stack = [root]
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        if line.endswith("{"):
            name = line[:-1].strip()
            if name[0].isdigit():
                fail("a field the transcription does not have: %s" % name)
            m = {}
            stack[-1].setdefault(name, []).append(m)
            stack.append(m)
            continue
        name, _, value = line.partition(": ")
        if name[0].isdigit():
            fail("a field the transcription does not have: %s" % name)
        if value.startswith('"'):
            v = unescape(value[1:-1])
        elif value in ("true", "false"):
            v = value == "true"
        elif "." in value or "e" in value or value in ("inf", "-inf", "nan"):
            v = float(value)
        else:
            v = int(value)
        stack[-1].setdefault(name, []).append(v)
    return root


def one(m, key, default=None):
    v = m.get(key)
    return v[0] if v else default


def decode(path):
    with open(path, "rb") as f:
        data = f.read()
    inner, compressed = inflate_trace(data)
    p = subprocess.run(["protoc", "--proto_path=" + HERE, "--decode=perfetto.protos.Trace",
                        "trace.proto"], input=inner, capture_output=True)
    if p.returncode:
        fail("protoc --decode failed: " + p.stderr.decode(errors="replace"))
    trace = parse_text(p.stdout.decode("latin-1"))
    out = rebuild(trace.get("packet", []), compressed, len(data))
    out["stats"]["raw_bytes"] = len(inner)
    out["stats"]["end_bytes"] = end_bytes(inner)
    return out


def text(b):
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        fail("a text that is not valid UTF-8: %r" % b)


def rebuild(packets, compressed, file_bytes):
    seqs = {}
    tracks = {}     # uuid -> [(ts, order, kind, event)]
    # --off-cpu waits whose BEGIN has an absolute time: drawn inside a span that began after
    # them (record gives a wait the spans open when its record came, which can be later)
    late_waits = 0
    descriptors = {}
    other = None
    order = 0
    for pkt in packets:
        seq_id = one(pkt, "trusted_packet_sequence_id", 0)
        if not seq_id:
            fail("a packet without trusted_packet_sequence_id")
        st = seqs.setdefault(seq_id, {"interned": None, "defaults": None, "clock": None})
        if one(pkt, "sequence_flags", 0) & SEQ_CLEARED:
            st["interned"] = {}
            st["clock"] = None
        if "trace_packet_defaults" in pkt:
            st["defaults"] = one(pkt, "trace_packet_defaults")
        if "interned_data" in pkt:
            if st["interned"] is None:
                fail("interned data before the sequence %d cleared its state" % seq_id)
            for field, entries in one(pkt, "interned_data").items():
                for e in entries:
                    key = (field, one(e, "iid"))
                    val = one(e, "name", one(e, "str"))
                    if key in st["interned"] and st["interned"][key] != val:
                        fail("iid %s of %s given twice" % (key[1], field))
                    st["interned"][key] = val
        if "clock_snapshot" in pkt:
            cs = one(pkt, "clock_snapshot")
            if one(cs, "primary_trace_clock") != CLOCK_MONOTONIC:
                fail("a clock snapshot whose primary clock is not CLOCK_MONOTONIC")
            clocks = {one(c, "clock_id"): c for c in cs.get("clocks", [])}
            for cid, c in clocks.items():
                if 64 <= cid < 128:
                    if not one(c, "is_incremental") or \
                            one(clocks.get(CLOCK_MONOTONIC, {}), "timestamp") != one(c, "timestamp"):
                        fail("sequence clock %d not an incremental copy of CLOCK_MONOTONIC" % cid)
                    st["clock"] = [cid, one(c, "timestamp")]
            continue
        if "track_descriptor" in pkt:
            td = one(pkt, "track_descriptor")
            descriptors[one(td, "uuid")] = td
        if "trace_attributes" in pkt:
            for a in one(pkt, "trace_attributes").get("attribute", []):
                if one(a, "key") == b"leanprofiler.other_data":
                    other = json.loads(one(a, "string_value"))
        if "track_event" not in pkt:
            continue
        te = one(pkt, "track_event")
        d = st["defaults"] or {}
        clock = one(pkt, "timestamp_clock_id", one(d, "timestamp_clock_id"))
        ts = one(pkt, "timestamp")
        if ts is None:
            fail("a track event without a timestamp")
        absolute = clock == CLOCK_MONOTONIC
        if absolute:
            pass
        elif st["clock"] and clock == st["clock"][0]:
            st["clock"][1] += ts
            ts = st["clock"][1]
        else:
            fail("a timestamp on clock %s, which the sequence has no snapshot of" % clock)
        uuid = one(te, "track_uuid", one(one(d, "track_event_defaults", {}), "track_uuid"))
        event = {"type": one(te, "type")}
        if event["type"] == 1:
            interned = st["interned"] or {}

            def lookup(field, iid):
                if (field, iid) not in interned:
                    fail("iid %d of %s not interned on sequence %d" % (iid, field, seq_id))
                return interned[(field, iid)]
            event["name"] = text(lookup("event_names", one(te, "name_iid"))
                                 if "name_iid" in te else one(te, "name", b""))
            event["cat"] = ",".join(text(lookup("event_categories", c))
                                    for c in te.get("category_iids", []))
            args = []
            for a in te.get("debug_annotations", []):
                key = text(lookup("debug_annotation_names", one(a, "name_iid"))
                           if "name_iid" in a else one(a, "name"))
                if "string_value_iid" in a:
                    v = text(lookup("debug_annotation_string_values", one(a, "string_value_iid")))
                elif "string_value" in a:
                    v = text(one(a, "string_value"))
                elif "legacy_json_value" in a:
                    v = json.loads(one(a, "legacy_json_value"))
                elif "bool_value" in a:
                    v = one(a, "bool_value")
                elif "uint_value" in a:
                    v = one(a, "uint_value")
                elif "double_value" in a:
                    v = float(one(a, "double_value"))
                else:
                    fail("an annotation without a value")
                args.append([key, v])
            event["args"] = args
            late_waits += absolute and event["cat"] == "off-cpu"
        elif event["type"] != 2:
            fail("a track event of type %s" % event["type"])
        tracks.setdefault(uuid, []).append((ts, order, event))
        order += 1
    slices = []
    for uuid, events in tracks.items():
        events.sort(key=lambda e: (e[0], e[1]))  # by time, equal times in the file's order
        open_ = []
        for ts, _, ev in events:
            if ev["type"] == 1:
                open_.append((ts, ev))
            else:
                if not open_:
                    fail("an END without a BEGIN on track %d" % uuid)
                start, b = open_.pop()
                slices.append({"pid": uuid >> 32, "tid": uuid & 0xFFFFFFFF, "name": b["name"],
                               "cat": b["cat"], "start_ns": start, "dur_ns": ts - start,
                               "depth": len(open_), "args": b["args"]})
        if open_:
            fail("%d slices never ended on track %d" % (len(open_), uuid))
    names = []
    for uuid, td in descriptors.items():
        if "process" in td:
            p = one(td, "process")
            names.append(["process_name", one(p, "pid"), one(p, "pid"),
                          text(one(p, "process_name", b""))])
        elif "thread" in td:
            t = one(td, "thread")
            names.append(["thread_name", one(t, "pid"), one(t, "tid"),
                          text(one(t, "thread_name", b""))])
        else:
            names.append(["thread_name", uuid >> 32, uuid & 0xFFFFFFFF, text(one(td, "name", b""))])
    return {"slices": slices, "names": names, "other_data": other,
            "stats": {"packets": len(packets), "compressed_packets": compressed,
                      "sequences": len(seqs), "file_bytes": file_bytes,
                      "late_waits": late_waits}}


def json_trace(path):
    with open(path, "rb") as f:
        t = json.loads(f.read(), parse_float=Decimal)
    base = t["otherData"]["base_ns"]
    slices, names = [], []
    for e in t["traceEvents"]:
        if e["ph"] == "X":
            args = [[k, float(v) if isinstance(v, Decimal) else v] for k, v in e["args"].items()]
            slices.append({"pid": e["pid"], "tid": e["tid"], "name": e["name"], "cat": e["cat"],
                           "start_ns": int(e["ts"] * 1000), "dur_ns": int(e["dur"] * 1000),
                           "args": args})
        elif e["ph"] == "M":
            names.append([e["name"], e["pid"], e["tid"], e["args"]["name"]])
    return slices, names, t["otherData"], base


def key(s):
    return json.dumps([s["pid"], s["tid"], s["start_ns"], s["dur_ns"], s["name"], s["cat"],
                       s["args"]], sort_keys=True)


def compare(pf_path, json_path):
    pf = decode(pf_path)
    slices, names, other, base = json_trace(json_path)
    bad = []
    if pf["other_data"] != json.loads(json.dumps(other, default=float)):
        bad.append("otherData differs:\n  %s\n  %s" % (pf["other_data"], other))
    for s in pf["slices"]:
        s["start_ns"] = max(0, s["start_ns"] - base)  # the JSON's ts: from the recording's start
    a = sorted(key(s) for s in pf["slices"])
    b = sorted(key(s) for s in slices)
    sa, sb = set(a), set(b)
    for k in sorted(sa - sb)[:20]:
        bad.append("only in the Perfetto trace: " + k)
    for k in sorted(sb - sa)[:20]:
        bad.append("only in the JSON trace: " + k)
    if len(a) != len(b):
        bad.append("%d slices in the Perfetto trace, %d in the JSON one" % (len(a), len(b)))
    na = sorted(json.dumps(n) for n in pf["names"])
    nb = sorted(json.dumps(n) for n in names)
    if na != nb:
        bad.append("names differ:\n  %s\n  %s" % (na, nb))
    for line in bad:
        print(line)
    print("%d slices, %d names compared; %s" % (len(a), len(na), "differences" if bad else "same"))
    return 1 if bad else 0


def same(recorded, converted):
    with open(recorded, "rb") as f:
        a = f.read()
    with open(converted, "rb") as f:
        b = f.read()
    if a == b:
        print("identical, %d bytes" % len(a))
        return 0
    pa, pb = decode(recorded), decode(converted)
    bad = []
    if pa["other_data"] != pb["other_data"]:
        bad.append("otherData differs")
    sa = sorted(json.dumps(s, sort_keys=True) for s in pa["slices"])
    sb = sorted(json.dumps(s, sort_keys=True) for s in pb["slices"])
    for k in sorted(set(sa) - set(sb))[:20]:
        bad.append("only in the recorded trace: " + k)
    for k in sorted(set(sb) - set(sa))[:20]:
        bad.append("only in the converted trace: " + k)
    if len(sa) != len(sb):
        bad.append("%d slices recorded, %d converted" % (len(sa), len(sb)))
    if sorted(map(json.dumps, pa["names"])) != sorted(map(json.dumps, pb["names"])):
        bad.append("names differ:\n  %s\n  %s" % (pa["names"], pb["names"]))
    for line in bad:
        print(line)
    print("%d slices compared; %s; bytes differ: %d and %d waits out of time order" %
          (len(sa), "differences" if bad else "same", pa["stats"]["late_waits"],
           pb["stats"]["late_waits"]))
    return 1 if bad else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "decode":
        json.dump(decode(sys.argv[2]), sys.stdout)
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "stats":
        json.dump(decode(sys.argv[2])["stats"], sys.stdout)
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        return compare(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 4 and sys.argv[1] == "same":
        return same(sys.argv[2], sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
