/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's own trace format (`record --format perfetto`): a Trace proto,
 * TracePackets of TrackEvent slices, deflated in compressed_packets of at
 * most LP_PFTRACE_CHUNK bytes. The interface is trace.h's: spans come as they
 * close (children before parents), off-CPU waits inside spans, names at the
 * end. docs/formats.md ("The Perfetto trace") says what the file holds;
 * tests/perfetto/trace.proto lists every field used, checked against
 * Perfetto's protos.
 *
 * One packet sequence per thread (and per keyed-span track): its first packet
 * clears the incremental state, sets the defaults (the thread's track, the
 * sequence's clock) and a ClockSnapshot of clock 64, incremental, equal to
 * CLOCK_MONOTONIC. Packets then carry the time since the sequence's previous
 * one. Names, categories, argument names and string values are interned once
 * per file (ids stable for the whole file) and emitted on a sequence with the
 * first packet that uses them there; our own texts (categories, "counter",
 * ...) with its first packet.
 *
 * A thread's spans wait until its top-level span closes (at most
 * LP_PFTRACE_HOLD_MAX of them), then go out as BEGIN and END packets in the
 * order the thread ran them: what the nesting says, never a sort by time, so
 * equal timestamps (a child ending with its parent, zero-length spans) keep
 * their nesting in the trace processor, which sorts packets by time and keeps
 * the file's order for equal times. A packet whose time is before its
 * sequence's previous one (a span rebuilt at attach, or a parent after a
 * partial flush) carries its absolute CLOCK_MONOTONIC time instead.
 *
 * A bounded trace (--trace-last, --trace-max-size: lp_pftrace_bound) puts
 * each span and slice, as it closes, through the JSON trace's ring
 * (tracering.h) as a record: its thread, depth, times, the interned ids it
 * refers to and its TrackEvent's bytes, not yet packets. What a packet needs
 * from before (its sequence's clock, the ids given on it) depends on what was
 * written before, which a ring that drops its oldest spans does not know; the
 * records it emits go onto their sequences as spans do without a bound. The
 * window's are emitted at the end: every sequence then starts at its first
 * kept flush (SEQ_INCREMENTAL_STATE_CLEARED, a ClockSnapshot at its time) and
 * defines each id it uses there, whatever the ring left out; ids never change
 * meaning in a file (texts[] keeps them all). The kept spans of a flush are a
 * whole top-level span and those of its spans that ended in the window: a
 * span's parent ends after it, so it is kept with it. The budget's are
 * emitted as they come, costed at their packets' largest (packets_cost). The
 * descriptors and otherData are written at close in any case.
 */
#ifndef LP_PFTRACE_H
#define LP_PFTRACE_H

#include "nest.h"
#include "strtab.h"

/* The file's name in a recording's directory (the JSON trace's: trace_read.h). */
#define LP_PFTRACE_FILE "leanprofiler-trace.pftrace"

/* Uncompressed bytes of packets per compressed_packets packet (Perfetto: under 512 KiB). */
#define LP_PFTRACE_CHUNK (256u << 10)
/*
 * The deflate level (libdeflate's, in zlib's format: the one Perfetto reads).
 * Deflate was half the writer's CPU with zlib. Measured with zlib on bench/pipeline's
 * packets (1M spans, 58.9 MB) and a recording's of bench/producer (2M spans,
 * 78 MB): bytes a span, CPU ms (least of 5, shared machine), and callgrind's
 * instructions on their first 16 MB:
 *                                  pipeline              recording
 *   level 1                        13.6   323  868M      5.74  306  708M
 *   level 2                        12.9   375  898M      5.23  319  704M
 *   level 2, deflateTune 16,16,64,1 15.2  379  1123M     6.39  372
 *   level 3                        12.2   512  1015M     4.92  477  774M
 *   level 6                        10.8  1138            4.23  961
 *   level 1, Z_RLE or HUFFMAN_ONLY 37.0   481  1726M     24.0  526
 *   level 1, memLevel 9            14.4   370            5.89  355
 *   level 1, windowBits 13         13.8   426            5.81  399
 *   level 2, 448 KiB chunks        12.9   412            5.21  322
 * Z_FILTERED is the default at levels 1-3. No setting costs less than 2 by
 * more than the noise (level 1: the same instructions, 6-10% more bytes).
 * What does: libdeflate (Debian's libdeflate-dev), level 1, 12.75 and 5.07
 * bytes a span in 154 and 127 ms where zlib's 2 took 557 and 614 in the same
 * rounds. With the JSON trace's commit made beside its writes (bgwrite.h),
 * zlib's deflate had become the slower trace of the two (bench row 18).
 */
#define LP_PFTRACE_ZLEVEL 1
/* Closed spans a thread keeps waiting for its top-level span; then they go out as they are. */
#define LP_PFTRACE_HOLD_MAX 16384
/* Texts interned per file; later new ones are written in every packet that uses them. */
#define LP_PFTRACE_INTERN_MAX 65536
/* Bytes of interned texts per file, the same way. */
#define LP_PFTRACE_INTERN_BYTES (16u << 20)

/* The sequence-scoped clock of every thread's sequence (64..127: Perfetto's user range). */
#define LP_PFTRACE_CLOCK 64
#define LP_PFTRACE_CLOCK_MONOTONIC 3 /* BuiltinClock BUILTIN_CLOCK_MONOTONIC */
/* trusted_packet_sequence_id of the file's own packets (descriptors, attributes). */
#define LP_PFTRACE_SEQ_FILE 1
/* The key of the trace attribute that holds otherData (as the JSON trace's). */
#define LP_PFTRACE_OTHER_DATA_KEY "leanprofiler.other_data"

/* Track uuids: a process's (pid << 32), a thread's or a keyed track's (pid << 32 | tid). */
static inline uint64_t lp_pftrace_uuid(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

/* The field numbers (tests/perfetto/trace.proto says where each was checked). */
enum {
	PF_TRACE_PACKET = 1,
	/* TracePacket */
	PF_TP_CLOCK_SNAPSHOT = 6,
	PF_TP_TIMESTAMP = 8,
	PF_TP_SEQ_ID = 10,
	PF_TP_TRACK_EVENT = 11,
	PF_TP_INTERNED = 12,
	PF_TP_SEQ_FLAGS = 13,
	PF_TP_COMPRESSED = 50,
	PF_TP_CLOCK_ID = 58,
	PF_TP_DEFAULTS = 59,
	PF_TP_TRACK_DESCRIPTOR = 60,
	PF_TP_ATTRIBUTES = 126,
	/* TracePacket.SequenceFlags */
	PF_SEQ_CLEARED = 1,
	PF_SEQ_NEEDS_STATE = 2,
	/* TracePacketDefaults: timestamp_clock_id is 58 as in TracePacket */
	PF_TPD_TRACK_EVENT = 11,
	/* TrackEventDefaults */
	PF_TED_TRACK_UUID = 11,
	/* TrackEvent */
	PF_TE_CATEGORY_IIDS = 3,
	PF_TE_ANNOTATIONS = 4,
	PF_TE_TYPE = 9,
	PF_TE_NAME_IID = 10,
	PF_TE_TRACK_UUID = 11,
	PF_TE_NAME = 23,
	PF_TYPE_BEGIN = 1,
	PF_TYPE_END = 2,
	/* DebugAnnotation */
	PF_DA_NAME_IID = 1,
	PF_DA_BOOL = 2,
	PF_DA_UINT = 3,
	PF_DA_DOUBLE = 5,
	PF_DA_STRING = 6,
	PF_DA_JSON = 9,
	PF_DA_NAME = 10,
	PF_DA_STRING_IID = 17,
	/* InternedData; each entry is {iid = 1, name or str = 2} */
	PF_ID_CATEGORIES = 1,
	PF_ID_NAMES = 2,
	PF_ID_ARG_NAMES = 3,
	PF_ID_ARG_STRINGS = 29,
	PF_IE_IID = 1,
	PF_IE_TEXT = 2,
	/* ClockSnapshot, ClockSnapshot.Clock */
	PF_CS_CLOCKS = 1,
	PF_CS_PRIMARY = 2,
	PF_CLK_ID = 1,
	PF_CLK_TIMESTAMP = 2,
	PF_CLK_INCREMENTAL = 3,
	/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
	PF_TD_UUID = 1,
	PF_TD_NAME = 2,
	PF_TD_PROCESS = 3,
	PF_TD_THREAD = 4,
	PF_TD_PARENT = 5,
	PF_PD_PID = 1,
	PF_PD_NAME = 6,
	PF_THD_PID = 1,
	PF_THD_TID = 2,
	PF_THD_NAME = 5,
	/* TraceAttributes, TraceAttributes.Attribute */
	PF_TA_ATTRIBUTE = 1,
	PF_TAA_KEY = 1,
	PF_TAA_STRING = 3,
};

struct lp_pftrace;
struct lp_tring;
struct lp_tring_stats;

/* What the writer did, for tests and the bench. */
struct lp_pftrace_stats {
	uint64_t spans, off_cpu;   /* slices written */
	uint64_t packets;          /* TracePackets inside the compressed ones */
	uint64_t absolute;         /* packets with an absolute time (see above) */
	uint64_t raw_bytes;        /* the packets' bytes before compression */
	uint64_t file_bytes;       /* written to the file */
	uint64_t inline_texts;     /* texts written in full: the interning limits were reached */
};

/* The trace file name in directory dirfd (lp_outfile_openat). 0 or -errno. */
int lp_pftrace_openat(struct lp_pftrace **out, int dirfd, const char *name,
		      const struct strtab *st, uint64_t base_ns);
int lp_pftrace_open(struct lp_pftrace **out, const char *path, const struct strtab *st,
		    uint64_t base_ns);
/* The file's descriptor (to give the file to its user). */
int lp_pftrace_fd(const struct lp_pftrace *t);
void lp_pftrace_span(struct lp_pftrace *t, const struct lp_span *s);
/*
 * One span from its parts (report --format perfetto, from a JSON trace): name
 * and metadata items already as the JSON trace's args are (meta: the
 * trace_read.h blob of keys and values, written as they are), counter when
 * has_counter, flags LP_SPAN_*. Times are absolute CLOCK_MONOTONIC ns.
 */
struct lp_pftrace_part {
	uint32_t pid, tid, depth;
	uint64_t start_ns, end_ns;
	const char *name;
	size_t name_len;
	const char *meta;
	size_t meta_len;
	bool has_counter, has_self_counter;
	uint64_t counter, self_counter;
	unsigned flags;
};
void lp_pftrace_span_part(struct lp_pftrace *t, const struct lp_pftrace_part *p);
/*
 * --off-cpu: as lp_trace_off_cpu; depth: the spans open on the thread then
 * (the slices' depth).
 */
void lp_pftrace_off_cpu(struct lp_pftrace *t, uint32_t pid, uint32_t tid, uint32_t depth,
			uint64_t off_ns, uint64_t wake_ns, uint64_t on_ns);
/* A process's (tid = pid) or thread's name, string id; written at the end. */
void lp_pftrace_name(struct lp_pftrace *t, bool process, uint32_t pid, uint32_t tid,
		     uint32_t name);
/* The same from its text (report --format perfetto). */
void lp_pftrace_name_text(struct lp_pftrace *t, bool process, uint32_t pid, uint32_t tid,
			  const char *name, size_t len);
/*
 * --trace-last (last_ns) and --trace-max-size (max_bytes; 0: none), as
 * lp_trace_bound, from now on (before the first span). max_bytes bounds, with
 * a window, the records held (about 40 bytes a span, with its texts' ids, not
 * the texts); without one, the packets before compression, each counted at
 * its largest: the file, deflated, is smaller. leader: the JSON trace's ring
 * of the same recording (lp_trace.ring), or NULL: both traces keep the same
 * spans (tracering.h). 0 or -ENOMEM.
 */
int lp_pftrace_bound(struct lp_pftrace *t, uint64_t last_ns, uint64_t max_bytes,
		     struct lp_tring *leader);
/* As lp_trace_bound_end: every span is closed; what the bound kept (zeros: no bound). */
void lp_pftrace_bound_end(struct lp_pftrace *t, uint64_t end_ns, struct lp_tring_stats *st);
/* Text id was freed: what the writer cached for it goes. */
void lp_pftrace_forget(struct lp_pftrace *t, uint32_t id);
/* Between collections: nothing to move (each cached text is its own allocation). */
void lp_pftrace_compact(struct lp_pftrace *t);
/*
 * Writes what is held, the tracks' descriptors with their names, otherData
 * (JSON text, may be NULL) as a trace attribute, and renames the file into
 * place; frees t. 0 or -errno.
 */
int lp_pftrace_close(struct lp_pftrace *t, const char *other_data_json,
		     struct lp_pftrace_stats *stats);
/* Removes the temporary file, frees t. */
void lp_pftrace_abort(struct lp_pftrace *t);

#endif
