// SPDX-License-Identifier: MIT
/*
 * leanprofiler: a span profiler for programs marked with include/leanprofiler.h.
 * main() parses the command line and picks the exit code; nothing else exits.
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli.h"
#include "clickhouse.h"
#include "cmd_export.h"
#include "cmd_report.h"
#include "common.h"
#include "diff.h"
#include "list.h"
#include "outfile.h"
#include "pftrace_convert.h"
#include "pictures.h"
#include "presets.h"
#include "proc.h"
#include "record.h"
#include "report.h"
#include "session.h"
#include "stats.h"
#include "top.h"
#include "window.h"

/* record --export: the recording succeeded (its files are written), its export failed. */
#define LP_EXIT_EXPORT 124

#define LP_VERSION "0.1.0"

const char *argp_program_version = "leanprofiler " LP_VERSION;
const char *argp_program_bug_address = NULL;

/*
 * The help texts: argp breaks a line longer than 79 columns at column 0, so
 * every indented line here (the modes, the examples) fits in 79 columns, a
 * long example continues with a backslash, and only prose paragraphs wrap.
 */
#define LP_STATUS_USAGE "125 for a bad command line"
#define LP_STR_(x) #x
#define LP_STR(x) LP_STR_(x) /* the text of a macro's value, for help texts */

static const char record_doc[] =
	"Record the spans of a program marked with leanprofiler.h, then print the summary table "
	"and write leanprofiler-trace.json (Chrome Trace Event format: open it in Perfetto) "
	"and leanprofiler-summary.json into the current directory, or DIR with -o. The "
	"previous recording's pair there is kept as leanprofiler-trace.json.old and "
	"leanprofiler-summary.json.old, replacing older ones. With --format perfetto the trace "
	"is leanprofiler-trace.pftrace, Perfetto's own protobuf format: several times smaller.\n\n"
	"  record -- COMMAND           launch COMMAND and record it from its first\n"
	"                              instruction until it exits\n"
	"  record -p PID               attach to a running process, without\n"
	"                              restarting it\n"
	"  record --all-processes BIN  every process running BIN, now or started later\n\n"
	"Every mode records all threads, the libraries' markers (dlopen'ed ones too) and the "
	"child processes the targets fork. -p and --all-processes record until --duration "
	"ends, the targets exit, or Ctrl-C; the targets run on, unharmed. More in "
	"leanprofiler-record(1)."
	"\vExamples:\n"
	"  sudo leanprofiler record -- ./build/examples/nested\n"
	"  sudo leanprofiler record -o /tmp/prof --buffer-size 64M -- \\\n"
	"      ./server --port 8080\n"
	"  sudo leanprofiler record -p 1234 --duration 10\n"
	"  sudo leanprofiler record -p 1234 --duration 1h --trace-last 10s\n"
	"  sudo leanprofiler record --all-processes /usr/bin/lean --duration 60\n"
	"  sudo leanprofiler record --format perfetto -- ./build/examples/nested\n"
	"  sudo leanprofiler record --preset cpython -- /usr/bin/python3.11 script.py\n"
	"  sudo leanprofiler record -p 1234 \\\n"
	"      --span 'python:gc__start,gc__done,meta=gen={arg0}'\n\n"
	"Exit status: COMMAND's (128+N when signal N killed it), 0 for -p and "
	"--all-processes; " LP_STATUS_USAGE " or when leanprofiler fails, 126 when COMMAND "
	"cannot be executed, 127 when it is not found; 124 when --export failed (the "
	"recording is kept; the command's status is said on stderr).\n";

enum { OPT_BUFFER = 1000, OPT_COUNTER_NAME, OPT_ALL, OPT_DURATION, OPT_RUN_AS_ROOT,
       OPT_SUMMARY_ONLY, OPT_SPAN, OPT_PRESET, OPT_MAX_GROUPS, OPT_ROWS, OPT_OFF_CPU,
       OPT_EXPORT, OPT_TRACE_LAST, OPT_TRACE_MAX_SIZE,
       OPT_FORMAT, OPT_WINDOW, OPT_KEEP };

static const struct argp_option record_options[] = {
	{ "output", 'o', "DIR", 0,
	  "Write the trace and summary into DIR, made with its parents when missing (default: "
	  "the current directory); the previous pair there is kept as *.json.old", 0 },
	{ "buffer-size", OPT_BUFFER, "SIZE", 0,
	  "Ring buffer size, a power of two from 64K to 1G; suffixes K, M, G (default: 16M)", 0 },
	{ "counter-name", OPT_COUNTER_NAME, "TEXT", 0,
	  "What the markers' counter counts, for the table (default: Lean heartbeats)", 0 },
	{ "pid", 'p', "PID", 0, "Attach to the running process PID", 0 },
	{ "all-processes", OPT_ALL, "BINARY", 0,
	  "Record every process running BINARY, now or later", 0 },
	{ "duration", OPT_DURATION, "SECONDS", 0,
	  "Stop recording after SECONDS (e.g. 2.5, or with a unit: 500ms, 5s, 2m, 1h)", 0 },
	{ "run-as-root", OPT_RUN_AS_ROOT, NULL, 0,
	  "Under sudo, run COMMAND as root (by default it runs as the user who ran sudo)", 0 },
	{ "summary-only", OPT_SUMMARY_ONLY, NULL, 0,
	  "Write no trace, only the table and the summary: memory stays bounded however many "
	  "spans (P95 past 65536 calls of a row from a histogram, within 0.4%)",
	  0 },
	{ "trace-last", OPT_TRACE_LAST, "DURATION", 0,
	  "Keep in the trace only the spans that ended in the last DURATION of the recording "
	  "(e.g. 5s, 500ms, 2m), a flight recorder; the table and the summary count every span",
	  0 },
	{ "trace-max-size", OPT_TRACE_MAX_SIZE, "SIZE", 0,
	  "Stop adding spans to the trace when it reaches SIZE, from 4K to 1024G, suffixes K, M, "
	  "G; with --trace-last, the most of the window kept in memory (default: 256M)", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0,
	  "The trace's format: json (Chrome Trace Event, leanprofiler-trace.json; the default), "
	  "perfetto (Perfetto's protobuf, leanprofiler-trace.pftrace), or json,perfetto (both, "
	  "of the same recording)", 0 },
	{ "off-cpu", OPT_OFF_CPU, NULL, 0,
	  "Split every span's time into on a CPU, taken by the hypervisor (steal, on a KVM "
	  "guest), waiting for a CPU (runq) and blocked, from the scheduler's switches; adds "
	  "columns to the table (see leanprofiler-record(1))", 0 },
	{ "max-groups", OPT_MAX_GROUPS, "N", 0,
	  "Rows of their own (a span name with its metadata) at most; the spans of later ones "
	  "are folded into overflow rows, per name (default: 10000)", 0 },
	{ "rows", OPT_ROWS, "N|all", 0,
	  "Rows the table shows, the first by self time (default: 40); the summary has all", 0 },
	{ "span", OPT_SPAN, "SPEC", 0,
	  "Also make spans from a pair of USDT probes: 'PROVIDER:ENTRY,PROVIDER:EXIT' and "
	  "optionally ',name=..' ',meta=..' ',key=argN' (see leanprofiler-record(1)); "
	  "repeatable", 0 },
	{ "preset", OPT_PRESET, "NAME", 0,
	  "Ready span-pair specs for a runtime: postgresql, jvm, libstdcxx, cpython "
	  "('leanprofiler list --presets'); repeatable", 0 },
	{ "verbose", 'v', NULL, 0, "Say what is attached; show libbpf's messages", 0 },
	{ "window", OPT_WINDOW, "SECONDS", 0,
	  "Continuous recording: every SECONDS (from 0.1 s, e.g. 60, 1m) close a summary "
	  "leanprofiler-summary.<UTC start>.json of the spans that ended in it (and its trace "
	  "leanprofiler-trace.<UTC start>.json, unless --summary-only) and start the next; "
	  "the whole recording's summary is written at the end as usual", 0 },
	{ "keep", OPT_KEEP, "N", 0,
	  "With --window, keep the newest N windows' files, removing older ones as new ones "
	  "are written (default: all)", 0 },
	{ "export", OPT_EXPORT, "URL", 0,
	  "At the end, send the recording to the ClickHouse server at URL, as "
	  "'leanprofiler export --clickhouse URL DIR' does; with --window, each window as it "
	  "closes instead", 0 },
	{ 0 },
};

static const char *record_export_url; /* --export */

/* What a duration of record's command line may be (lp_parse_seconds). */
#define LP_DURATION_WORDS                                                                          \
	"seconds (2.5) or a number and its unit (500ms, 5s, 2m, 1h), more than 0 and at most "   \
	LP_STR(LP_SECONDS_MAX) " s"

/* A process ID: a decimal number from 1 to INT32_MAX. 0 or -EINVAL. */
/*
 * top -H, ps -L and gettid() show thread ids: one stands for its process,
 * which is what is recorded (every thread of it), and said so.
 */
static pid_t process_of(pid_t pid)
{
	pid_t tgid;
	char comm[32] = "?";

	if (lp_proc_tgid(pid, &tgid) || tgid == pid)
		return pid; /* a process, or gone: lp_record says which */
	lp_proc_comm(tgid, comm, sizeof(comm));
	lp_note("%d is a thread of process %d (%s): recording the process, every thread of it",
		(int)pid, (int)tgid, comm);
	return tgid;
}

/* What leanprofiler record exits with (docs/limits.md, "Exit statuses"). */
static int record_exit_code(const struct lp_record_opts *o, const struct lp_record_result *res,
			    int err)
{
	switch (res->stage) {
	case LP_STAGE_EXEC:
		return err == -ENOENT ? LP_EXIT_NOT_FOUND : LP_EXIT_CANNOT_RUN;
	case LP_STAGE_SETUP:
		return LP_EXIT_FAILURE;
	case LP_STAGE_INTERRUPTED:
		return res->exit_code; /* 128 + the signal, as a shell's */
	case LP_STAGE_RUN:
		return err ? LP_EXIT_FAILURE : o->mode == LP_MODE_LAUNCH ? res->exit_code : 0;
	}
	return LP_EXIT_FAILURE;
}

/* The table, where the files are, and what was lost. */
static void print_recording(const struct lp_record_opts *o, const struct lp_report *rep)
{
	lp_report_table(stdout, rep);
	fputc('\n', stdout);
	if (rep->trace_path)
		printf("Trace: %s\n", rep->trace_path);
	else if (o->window_ns)
		printf("Windows: leanprofiler-summary.<UTC start>.json%s in %s, one every %.3f s%s\n",
		       o->summary_only ? "" : " and leanprofiler-trace.<UTC start>.json", o->out_dir,
		       (double)o->window_ns / 1e9, o->keep ? " (the newest --keep kept)" : "");
	else if (o->summary_only && !o->no_outputs)
		printf("Trace: not written (--summary-only)\n");
	if (rep->summary_path)
		printf("Summary: %s\n", rep->summary_path);
	fflush(stdout);
	if (rep->loss.enter + rep->loss.exit)
		lp_warn("%llu events were lost because the ring buffer was full; "
			"rerun with a larger --buffer-size (now %zu bytes)",
			(unsigned long long)(rep->loss.enter + rep->loss.exit), o->buffer_bytes);
}

static int parse_pid(const char *arg, pid_t *out)
{
	char *end;
	long pid;

	errno = 0;
	pid = strtol(arg, &end, 10);
	if (errno || *end || end == arg || pid <= 0 || pid > INT32_MAX)
		return -EINVAL;
	*out = (pid_t)pid;
	return 0;
}

/* Adds a span-pair spec to o (specs has room for LP_SPEC_MAX). */
static error_t add_spec(struct argp_state *state, struct lp_record_opts *o, struct lp_spec *specs,
		     const char *text, const char *preset)
{
	char err[256];

	if (o->nspecs == LP_SPEC_MAX)
		return lp_usage_error(state, "more than %d span-pair specs (LP_SPEC_MAX)", LP_SPEC_MAX);
	if (lp_spec_parse(text, &specs[o->nspecs], err, sizeof(err)))
		return lp_usage_error(state, "invalid --span '%s': %s", text, err);
	specs[o->nspecs].preset = preset;
	o->nspecs++;
	return 0;
}

static error_t record_parse(int key, char *arg, struct argp_state *state)
{
	struct lp_record_opts *o = state->input;
	uint64_t count;

	switch (key) {
	case 'o':
		if (!*arg)
			return lp_usage_error(state, "--output needs a directory");
		o->out_dir = arg;
		break;
	case 'v':
		lp_verbose = 1;
		break;
	case OPT_BUFFER:
		if (lp_parse_size(arg, LP_BUFFER_MIN, LP_BUFFER_MAX, &count) || (count & (count - 1)))
			return lp_usage_error(state,
				   "invalid --buffer-size '%s': a power of two from 64K to 1G, "
				   "e.g. 16M",
				   arg);
		o->buffer_bytes = (size_t)count;
		break;
	case OPT_COUNTER_NAME:
		o->counter_name = arg;
		break;
	case OPT_RUN_AS_ROOT:
		o->run_as_root = true;
		break;
	case OPT_SUMMARY_ONLY:
		o->summary_only = true;
		break;
	case OPT_OFF_CPU:
		o->off_cpu = true;
		break;
	case OPT_FORMAT:
		if (!strcmp(arg, "perfetto")) {
			o->perfetto = true;
			o->no_json = true;
		} else if (!strcmp(arg, "json,perfetto") || !strcmp(arg, "perfetto,json")) {
			o->perfetto = true;
			o->no_json = false;
		} else if (!strcmp(arg, "json")) {
			o->perfetto = o->no_json = false;
		} else {
			return lp_usage_error(state, "invalid --format '%s': json, perfetto or "
						  "json,perfetto", arg);
		}
		break;
	case OPT_EXPORT: {
		char problem[256];

		/* Before anything is recorded: a URL that cannot be used fails the command line. */
		if (lp_ch_check_url(arg, problem, sizeof(problem)))
			return lp_usage_error(state, "invalid --export: %s", problem);
		record_export_url = arg;
		break;
	}
	case OPT_MAX_GROUPS:
		if (lp_parse_count(arg, 1, LP_GROUPS_MAX_LIMIT, &count))
			return lp_usage_error(state, "invalid --max-groups '%s': a number from 1 to %d", arg,
				    LP_GROUPS_MAX_LIMIT);
		o->max_groups = (size_t)count;
		break;
	case OPT_ROWS:
		if (!strcmp(arg, "all"))
			o->table_rows = 0;
		else if (lp_parse_count(arg, 1, SIZE_MAX, &count))
			return lp_usage_error(state, "invalid --rows '%s': a number from 1, or all", arg);
		else
			o->table_rows = (size_t)count;
		break;
	case OPT_SPAN:
		return add_spec(state, o, (struct lp_spec *)o->specs, arg, NULL);
	case OPT_PRESET: {
		const struct lp_preset *p = lp_preset_find(arg);

		if (!p)
			return lp_usage_error(state, "unknown preset '%s' (presets: %s)", arg, lp_preset_names());
		for (const char *const *sp = p->specs; *sp; sp++) {
			error_t err = add_spec(state, o, (struct lp_spec *)o->specs, *sp, p->name);

			if (err)
				return err;
		}
		break;
	}
	case 'p': {
		pid_t pid;

		if (parse_pid(arg, &pid))
			return lp_usage_error(state, "invalid PID '%s'", arg);
		if (o->mode == LP_MODE_ATTACH)
			return lp_usage_error(state, "-p given twice: one process per recording "
						     "(every process of a binary: --all-processes)");
		if (o->mode != LP_MODE_LAUNCH)
			return lp_usage_error(state, "-p and --all-processes exclude each other");
		o->mode = LP_MODE_ATTACH;
		o->pid = pid;
		break;
	}
	case OPT_ALL:
		if (o->mode == LP_MODE_ALL)
			return lp_usage_error(state, "--all-processes given twice: one binary per "
						     "recording");
		if (o->mode != LP_MODE_LAUNCH)
			return lp_usage_error(state, "-p and --all-processes exclude each other");
		if (!*arg)
			return lp_usage_error(state, "--all-processes needs a binary");
		o->mode = LP_MODE_ALL;
		o->binary = arg;
		break;
	case OPT_DURATION:
		if (lp_parse_seconds(arg, &o->duration_ns))
			return lp_usage_error(state, "invalid --duration '%s': " LP_DURATION_WORDS, arg);
		break;
	case OPT_WINDOW:
		if (lp_parse_seconds(arg, &o->window_ns) || o->window_ns < LP_WINDOW_MIN_NS)
			return lp_usage_error(state, "invalid --window '%s': " LP_DURATION_WORDS
						  ", and at least 0.1 s", arg);
		break;
	case OPT_KEEP:
		if (lp_parse_count(arg, 1, LP_WINDOW_KEEP_MAX, &count))
			return lp_usage_error(state, "invalid --keep '%s': a number from 1 to %d",
					      arg, LP_WINDOW_KEEP_MAX);
		o->keep = count;
		break;
	case OPT_TRACE_LAST:
		if (lp_parse_seconds(arg, &o->trace_last_ns))
			return lp_usage_error(state, "invalid --trace-last '%s': " LP_DURATION_WORDS, arg);
		break;
	case OPT_TRACE_MAX_SIZE:
		if (lp_parse_size(arg, LP_TRACE_SIZE_MIN, LP_TRACE_SIZE_MAX, &count))
			return lp_usage_error(state,
					      "invalid --trace-max-size '%s': a size from 4K to 1024G, "
					      "suffixes K, M, G, e.g. 100M",
					      arg);
		o->trace_max_bytes = count;
		break;
	case ARGP_KEY_ARG:
		if (o->mode != LP_MODE_LAUNCH)
			return lp_usage_error(state, "a COMMAND cannot go with -p or --all-processes");
		/* The command starts here; its own options are not ours. */
		o->argv = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (o->mode == LP_MODE_LAUNCH && !o->argv)
			return lp_usage_error(state, "no COMMAND to record (or -p PID, or --all-processes BINARY)");
		if (o->mode == LP_MODE_LAUNCH && o->duration_ns)
			return lp_usage_error(state, "--duration goes with -p or --all-processes");
		if (o->keep && !o->window_ns)
			return lp_usage_error(state, "--keep goes with --window");
		if (o->window_ns && (o->trace_last_ns || o->trace_max_bytes || o->perfetto))
			return lp_usage_error(state, "--window writes a JSON trace per window: it does "
						     "not go with %s",
					      o->perfetto ? "--format perfetto"
					      : o->trace_last_ns ? "--trace-last" : "--trace-max-size");
		if (o->summary_only && (o->trace_last_ns || o->trace_max_bytes))
			return lp_usage_error(state, "%s bounds the trace, which --summary-only does "
						     "not write: give one or the other",
					      o->trace_last_ns ? "--trace-last" : "--trace-max-size");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* record's options as they are before the command line; its specs' room (NULL: said). */
static struct lp_spec *record_defaults(struct lp_record_opts *o, const char *out_dir)
{
	struct lp_spec *specs = calloc(LP_SPEC_MAX, sizeof(*specs));

	*o = (struct lp_record_opts){
		.out_dir = out_dir,
		.buffer_bytes = LP_BUFFER_DEFAULT,
		.counter_name = "Lean heartbeats",
		.max_groups = LP_GROUPS_MAX,
		.table_rows = LP_TABLE_ROWS_DEFAULT,
		.specs = specs,
	};
	if (!specs)
		lp_err("out of memory");
	return specs;
}

static int cmd_record(int argc, char **argv)
{
	static const struct argp_child children[] = { LP_CLI_STD_CHILD, { 0 } };
	static const struct argp argp = { record_options, record_parse,
					  "[--] COMMAND [ARG...]\n-p PID\n--all-processes BINARY",
					  record_doc, children, NULL, NULL };
	struct lp_record_opts o;
	struct lp_record_result res;
	struct lp_spec *specs = record_defaults(&o, ".");
	int err, status, code;

	if (!specs)
		return LP_EXIT_FAILURE;
	argv[0] = "leanprofiler record"; /* how argp names us in its messages */
	if (!lp_cli_parse(&argp, argc, argv, ARGP_IN_ORDER, &o, &status)) {
		free(specs);
		return status;
	}
	if (o.mode == LP_MODE_ATTACH)
		o.pid = process_of(o.pid);
	o.print = print_recording;
	if (o.window_ns)
		o.window_export_url = record_export_url; /* each window, as it closes */
	err = lp_record(&o, &res);
	if (res.report && !res.printed)
		print_recording(&o, res.report);
	code = record_exit_code(&o, &res, err);
	if (res.export_failed)
		code = LP_EXIT_EXPORT;
	if (record_export_url && !o.window_ns && res.report && res.report->summary_path) {
		char kept[80];

		snprintf(kept, sizeof(kept), " (the recording is kept; the command exited %d)", code);
		if (lp_export_recording(record_export_url, res.report->summary_path, kept))
			code = LP_EXIT_EXPORT;
	}
	lp_record_result_free(&res);
	free(specs);
	return code;
}

static const char top_doc[] =
	"Record as 'record' does and show it as it goes: a full-screen table refreshed every "
	"--interval, one row per span name and metadata with record's columns (Self, Total, "
	"Calls, Mean, P95, the counter, %; CPU%, Runq and Blocked with --off-cpu), of the "
	"spans that ended in the last interval, or of the whole recording. Keys: a switches "
	"between the last interval and the whole recording, s the sort column (self, total, "
	"calls, mean, p95, name), / filters by name (Enter applies, Esc cancels; empty: all), "
	"p or space pauses (the interval shown stays), q quits (as Ctrl-C: a launched COMMAND "
	"gets SIGINT, q again ends at once). With stdout not a terminal, or --batch, one "
	"plain table per interval instead. At the end, record's table of the whole recording. "
	"Without -o nothing is written; with -o DIR the recording's trace and summary as "
	"record writes them. More in leanprofiler-top(1)."
	"\vExamples:\n"
	"  sudo leanprofiler top -p 1234\n"
	"  sudo leanprofiler top --interval 5 --all-processes /usr/bin/lean\n"
	"  sudo leanprofiler top --off-cpu -o /tmp/prof -- ./server --port 8080\n"
	"  sudo leanprofiler top -p 1234 --duration 30 | tee top.log\n\n"
	"Exit status: as record's: COMMAND's (128+N when signal N killed it), 0 for -p and "
	"--all-processes; " LP_STATUS_USAGE " or when leanprofiler fails, 126 when COMMAND "
	"cannot be executed, 127 when it is not found.\n";

enum { OPT_INTERVAL = 1300, OPT_TOP_SORT };

/* record's options top takes too (their help is record's). */
static const int top_record_keys[] = {
	OPT_BUFFER, OPT_COUNTER_NAME, 'p', OPT_ALL, OPT_DURATION, OPT_RUN_AS_ROOT,
	OPT_OFF_CPU, OPT_MAX_GROUPS, OPT_ROWS, OPT_SPAN, OPT_PRESET, 'v',
};

static const struct argp_option top_own_options[] = {
	{ "output", 'o', "DIR", 0,
	  "Also write the recording's trace and summary into DIR, as record does (default: "
	  "nothing is written)", 0 },
	{ "interval", OPT_INTERVAL, "SECONDS", 0,
	  "Refresh every SECONDS (default 1; e.g. 0.5, 2s, 500ms), from 0.1 s to 1 h", 0 },
	{ "sort", OPT_TOP_SORT, "KEY", 0,
	  "Order the rows by self (the default), total, calls, mean, p95 or name at first", 0 },
	{ "batch", 'b', NULL, 0,
	  "Plain tables, one per interval, even on a terminal (as when stdout is not one); "
	  "--rows of each", 0 },
	{ 0 },
};

struct top_args {
	struct lp_record_opts o; /* first: record_parse takes the input as one */
	struct lp_top_opts t;
};

static error_t top_parse(int key, char *arg, struct argp_state *state)
{
	struct top_args *a = state->input;

	switch (key) {
	case OPT_INTERVAL:
		if (lp_parse_seconds(arg, &a->t.interval_ns) ||
		    a->t.interval_ns < LP_TOP_INTERVAL_MIN_NS || a->t.interval_ns > LP_TOP_INTERVAL_MAX_NS)
			return lp_usage_error(state, "invalid --interval '%s': seconds (0.5) or a "
						  "number and its unit (500ms, 2s), from 0.1 s to 1 h",
					      arg);
		return 0;
	case OPT_TOP_SORT:
		if (lp_sort_parse(arg, &a->t.sort))
			return lp_usage_error(state, "invalid --sort '%s': self, total, calls, mean, "
						  "p95 or name", arg);
		return 0;
	case 'b':
		a->t.batch = true;
		return 0;
	default:
		return record_parse(key, arg, state);
	}
}

/* top's options: record's it takes, then its own. */
static const struct argp_option *top_options(void)
{
	static struct argp_option opts[ARRAY_SIZE(record_options) + ARRAY_SIZE(top_own_options)];
	size_t n = 0;

	if (opts[0].name)
		return opts;
	for (size_t i = 0; record_options[i].name; i++)
		for (size_t k = 0; k < ARRAY_SIZE(top_record_keys); k++)
			if (record_options[i].key == top_record_keys[k])
				opts[n++] = record_options[i];
	for (size_t i = 0; top_own_options[i].name; i++)
		opts[n++] = top_own_options[i];
	return opts;
}

static struct lp_top *top_now; /* what print_top leaves before printing */

/* The end: the screen left, then record's table of the whole recording. */
static void print_top(const struct lp_record_opts *o, const struct lp_report *rep)
{
	lp_top_end(top_now, (struct lp_report *)rep);
	print_recording(o, rep);
}

static int cmd_top(int argc, char **argv)
{
	static const struct argp_child children[] = { LP_CLI_STD_CHILD, { 0 } };
	struct argp argp = { top_options(), top_parse,
			     "[--] COMMAND [ARG...]\n-p PID\n--all-processes BINARY", top_doc,
			     children, NULL, NULL };
	struct top_args a;
	struct lp_record_result res;
	struct lp_spec *specs = record_defaults(&a.o, NULL);
	int err, status, code;

	if (!specs)
		return LP_EXIT_FAILURE;
	a.t = (struct lp_top_opts){ .interval_ns = LP_TOP_INTERVAL_DEFAULT_NS,
				    .sort = LP_SORT_SELF };
	argv[0] = "leanprofiler top";
	if (!lp_cli_parse(&argp, argc, argv, ARGP_IN_ORDER, &a, &status)) {
		free(specs);
		return status;
	}
	/* Without -o: no files, and memory bounded as --summary-only's (no trace). */
	if (!a.o.out_dir) {
		a.o.out_dir = ".";
		a.o.no_outputs = a.o.summary_only = true;
	}
	if (!isatty(STDOUT_FILENO))
		a.t.batch = true;
	a.t.max_groups = a.o.max_groups;
	a.t.bounded = a.o.summary_only;
	a.t.table_rows = a.o.table_rows;
	if (a.o.mode == LP_MODE_ATTACH)
		a.o.pid = process_of(a.o.pid);
	if (lp_top_new(&top_now, &a.t)) {
		free(specs);
		return LP_EXIT_FAILURE;
	}
	a.o.watch = lp_top_watch(top_now);
	a.o.print = print_top;
	err = lp_record(&a.o, &res);
	lp_top_free(top_now); /* the terminal as it was, whatever happened */
	top_now = NULL;
	if (res.report && !res.printed)
		print_recording(&a.o, res.report);
	code = record_exit_code(&a.o, &res, err);
	lp_record_result_free(&res);
	free(specs);
	return code;
}

static const char list_doc[] =
	"List the USDT probes of BINARY (an executable or a shared library), or of every file "
	"a running process maps: one line per probe with its sites, semaphore, argument spec "
	"and file. marker=leanprofiler marks leanprofiler.h's own markers, presets=NAME the "
	"presets of 'record --preset' that use the probe, unsupported=ARG an argument spec "
	"libbpf cannot decode, with (N of M sites) when only some sites have one (record skips "
	"those sites; a probe with no other site cannot be recorded). Needs no privileges beyond "
	"reading the files (and, with -p, the process's /proc/PID/maps).\n\n"
	"--presets lists the presets and the span-pair specs they are made of. More in "
	"leanprofiler-list(1)."
	"\vExamples:\n"
	"  leanprofiler list /usr/bin/python3.11\n"
	"  leanprofiler list -p \"$(pidof postgres | cut -d' ' -f1)\"\n"
	"  leanprofiler list --presets\n\n"
	"Exit status: 0; " LP_STATUS_USAGE " or when the probes cannot be listed.\n";

struct list_opts {
	const char *path;
	pid_t pid;
	bool presets;
};

static const struct argp_option list_options[] = {
	{ "pid", 'p', "PID", 0, "List the probes of the files the running process PID maps", 0 },
	{ "presets", 'P', NULL, 0, "List the presets and their span-pair specs", 0 },
	{ 0 },
};

static error_t list_parse(int key, char *arg, struct argp_state *state)
{
	struct list_opts *o = state->input;

	switch (key) {
	case 'p': {
		pid_t pid;

		if (parse_pid(arg, &pid))
			return lp_usage_error(state, "invalid PID '%s'", arg);
		if (o->pid)
			return lp_usage_error(state, "-p given twice: one process at a time");
		o->pid = pid;
		break;
	}
	case 'P':
		o->presets = true;
		break;
	case ARGP_KEY_ARG:
		if (o->path)
			return lp_usage_error(state, "one BINARY at a time");
		o->path = arg;
		break;
	case ARGP_KEY_END:
		if ((o->path != NULL) + (o->pid != 0) + o->presets != 1)
			return lp_usage_error(state, "give one of BINARY, -p PID or --presets");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int cmd_list(int argc, char **argv)
{
	static const struct argp_child children[] = { LP_CLI_STD_CHILD, { 0 } };
	static const struct argp argp = { list_options, list_parse, "BINARY\n-p PID\n--presets",
					  list_doc, children, NULL, NULL };
	struct list_opts o = { 0 };
	int err, status;

	argv[0] = "leanprofiler list";
	if (!lp_cli_parse(&argp, argc, argv, 0, &o, &status))
		return status;
	if (o.presets) {
		for (size_t i = 0; i < lp_npresets; i++) {
			printf("%s: %s\n", lp_presets[i].name, lp_presets[i].what);
			for (const char *const *s = lp_presets[i].specs; *s; s++)
				printf("  --span '%s'\n", *s);
		}
		return 0;
	}
	err = o.pid ? lp_list_pid(stdout, process_of(o.pid)) : lp_list_file(stdout, o.path);
	if (fflush(stdout) && !err) {
		lp_err("cannot write the list: %s", strerror(errno));
		err = -EIO;
	}
	return err ? LP_EXIT_FAILURE : 0;
}

static const char report_doc[] =
	"Print a recording again from its summary, without recording again: the table "
	"'record' printed (its rows sorted and cut with --sort, --top, --min-total), the "
	"threads, the call tree or folded stacks; or pictures of it: --svg writes "
	"timeline.svg and rows.svg for a document or a wiki, --html one self-contained page "
	"(nothing fetched from the network) to explore it in a browser; or --format perfetto "
	"writes its JSON trace again as leanprofiler-trace.pftrace, Perfetto's protobuf "
	"format, beside it. PATH is a recording's directory or one of its files (default: "
	"the current directory; a trace of either format). Needs no privileges. More in "
	"leanprofiler-report(1)."
	"\vExamples:\n"
	"  leanprofiler report build\n"
	"  leanprofiler report --sort total --top 10 /tmp/prof\n"
	"  leanprofiler report --tree --min-total 1ms /tmp/prof\n"
	"  leanprofiler report --folded /tmp/prof | flamegraph.pl > profile.svg\n"
	"  leanprofiler report --svg docs/pictures build\n"
	"  leanprofiler report --html /tmp/prof.html /tmp/prof\n"
	"  leanprofiler report --format perfetto /tmp/prof\n\n"
	"Exit status: 0; " LP_STATUS_USAGE " or when the recording cannot be read or "
	"drawn (one line says why).\n";

enum { OPT_SORT = 1100, OPT_TOP, OPT_MIN_TOTAL, OPT_THREADS, OPT_TREE, OPT_FOLDED,
       OPT_REPORT_FORMAT };

static const struct argp_option report_options[] = {
	{ "sort", OPT_SORT, "KEY", 0,
	  "Order the rows by self (the table's order), total, calls, mean, p95 or name; "
	  "--threads: by calls or name instead of recorded time", 0 },
	{ "top", OPT_TOP, "N", 0, "Only the first N rows (--threads: threads; --tree: children "
				  "of each path)", 0 },
	{ "min-total", OPT_MIN_TOTAL, "DURATION", 0,
	  "Only rows (--tree: paths) with at least DURATION of total time, e.g. 5ms, 200us", 0 },
	{ "threads", OPT_THREADS, NULL, 0, "One row per thread: spans and recorded time", 0 },
	{ "tree", OPT_TREE, NULL, 0,
	  "The call tree: total, self and calls per call path, indented", 0 },
	{ "folded", OPT_FOLDED, NULL, 0,
	  "Folded stacks, 'root;child;leaf SELF_NS' per path (flamegraph.pl, inferno, "
	  "speedscope)", 0 },
	{ "verbose", 'v', NULL, 0, "Also the Profiler line (what recording cost leanprofiler)", 0 },
	{ "format", OPT_REPORT_FORMAT, "perfetto", 0,
	  "Write the recording's JSON trace again as leanprofiler-trace.pftrace (Perfetto's "
	  "protobuf), beside it, instead of printing", 0 },
	{ 0 },
};

struct report_args {
	struct lp_pictures_opts pictures; /* the child parser's (lp_pictures_argp) */
	struct lp_view_opts v;
	const char *path;
	bool views;     /* a view was chosen */
	bool min_total; /* --min-total was given (0 too) */
	bool to_perfetto; /* --format perfetto */
};

static error_t report_view(struct argp_state *state, struct report_args *a, enum lp_view v)
{
	if (a->views)
		return lp_usage_error(state, "--threads, --tree and --folded exclude each other");
	a->views = true;
	a->v.view = v;
	return 0;
}

/* Which options each view takes: the folded stacks are every path, for other tools. */
static error_t report_check(struct argp_state *state, const struct report_args *a)
{
	bool min_total = a->min_total;

	enum lp_view v = a->v.view;
	enum lp_sort k = a->v.sort;

	if (v == LP_VIEW_FOLDED && (k != LP_SORT_RECORDED || a->v.top || min_total))
		return lp_usage_error(state, "--folded prints every path: no --sort, --top or "
					  "--min-total");
	if (v == LP_VIEW_TREE && k != LP_SORT_RECORDED)
		return lp_usage_error(state, "--tree orders children by total time: no --sort");
	if (v == LP_VIEW_THREADS && k != LP_SORT_RECORDED && k != LP_SORT_CALLS &&
	    k != LP_SORT_NAME)
		return lp_usage_error(state, "--threads sorts by recorded time (the default), calls "
					  "or name");
	if (v == LP_VIEW_THREADS && min_total)
		return lp_usage_error(state, "--threads has no --min-total");
	return 0;
}

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	struct report_args *a = state->input;
	char *end;
	unsigned long long n;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &a->pictures;
		break;
	case OPT_SORT:
		if (lp_sort_parse(arg, &a->v.sort))
			return lp_usage_error(state, "invalid --sort '%s': self, total, calls, mean, "
						  "p95 or name", arg);
		break;
	case OPT_TOP:
		errno = 0;
		n = strtoull(arg, &end, 10);
		if (errno || *end || end == arg || n == 0 || n > SIZE_MAX || arg[0] == '-')
			return lp_usage_error(state, "invalid --top '%s': a number of rows, 1 or more",
					   arg);
		a->v.top = (size_t)n;
		break;
	case OPT_MIN_TOTAL:
		if (lp_duration_parse(arg, &a->v.min_total_ns))
			return lp_usage_error(state, "invalid --min-total '%s': a duration with its "
						  "unit, e.g. 5ms, 200us, 1.5s", arg);
		a->min_total = true;
		break;
	case OPT_THREADS:
		return report_view(state, a, LP_VIEW_THREADS);
	case OPT_TREE:
		return report_view(state, a, LP_VIEW_TREE);
	case OPT_FOLDED:
		return report_view(state, a, LP_VIEW_FOLDED);
	case 'v':
		a->v.verbose = true;
		break;
	case OPT_REPORT_FORMAT:
		if (strcmp(arg, "perfetto"))
			return lp_usage_error(state, "invalid --format '%s': perfetto (the JSON trace "
						  "as Perfetto's)", arg);
		a->to_perfetto = true;
		break;
	case ARGP_KEY_ARG:
		if (a->path)
			return lp_usage_error(state, "one recording at a time (to compare two: "
						  "'leanprofiler diff BASE NEW')");
		a->path = arg;
		break;
	case ARGP_KEY_END:
		return report_check(state, a);
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/*
 * `report PATH >> PATH/leanprofiler-summary.json` would append to what it read
 * (with `>` the shell has emptied it already, and reading it says so).
 */
static bool stdout_is_input(const char *what)
{
	const char *input = lp_outfile_input_at_fd(STDOUT_FILENO);

	if (input)
		lp_err("cannot write the %s to standard output: it is %s, which this command "
		       "reads; nothing written; send the output elsewhere", what, input);
	return input != NULL;
}

/* Exit status: 0, or 125 when the recording cannot be read or printed. */
static int cmd_report(int argc, char **argv)
{
	static const struct argp_child children[] = { { &lp_pictures_argp, 0, NULL, 0 },
						      LP_CLI_STD_CHILD, { 0 } };
	static const struct argp argp = { report_options, report_parse,
					  "[PATH]\n--svg DIR [PATH]\n--html FILE [PATH]", report_doc,
					  children, NULL, NULL };
	struct report_args a = { 0 };
	struct lp_summary s;
	int err, status;

	argv[0] = "leanprofiler report";
	if (!lp_cli_parse(&argp, argc, argv, 0, &a, &status))
		return status;
	if (a.to_perfetto) {
		char *out;

		if (a.views || lp_pictures_wanted(&a.pictures)) {
			lp_err_from("leanprofiler report", "--format perfetto writes a trace: no "
				    "--threads, --tree, --folded, --svg or --html with it; see "
				    "'leanprofiler report --help'");
			return LP_EXIT_USAGE;
		}
		if (lp_pftrace_convert(a.path ? a.path : ".", &out))
			return LP_EXIT_FAILURE; /* said */
		printf("Trace: %s\n", out);
		free(out);
		return 0;
	}
	if (lp_pictures_wanted(&a.pictures))
		return lp_pictures_run(&a.pictures, a.path) ? LP_EXIT_FAILURE : 0;
	if (lp_summary_read(a.path ? a.path : ".", &s))
		return LP_EXIT_FAILURE; /* said */
	if (stdout_is_input("report")) {
		lp_summary_free(&s);
		return LP_EXIT_FAILURE;
	}
	err = lp_view_print(stdout, &s, &a.v);
	lp_summary_free(&s);
	if (fflush(stdout) && !err) {
		lp_err("cannot write the report: %s", strerror(errno));
		err = -EIO;
	}
	return err ? LP_EXIT_FAILURE : 0;
}

/* diff's own exit status: a regression, for CI (its failures are LP_EXIT_FAILURE). */
#define LP_EXIT_REGRESSION 1

static const char diff_doc[] =
	"Compare two recordings (directories or summary files): every row, matched by name and "
	"metadata, with its calls, self, total, mean and P95 on each side and the change in "
	"percent, sorted by the change of self time; rows of one side only are marked added "
	"or removed. Then one line per regression: a row whose self time or P95 grew by more "
	"than the threshold, with at least " LP_STR(LP_DIFF_MIN_CALLS) " calls on each side, "
	"and whose calls are slower by a one-sided Mann-Whitney rank test on their histograms "
	"(z >= " LP_STR(LP_DIFF_Z) "; self times for self time, durations for P95). More in "
	"leanprofiler-diff(1)."
	"\vExamples:\n"
	"  leanprofiler diff /tmp/before /tmp/after\n"
	"  leanprofiler diff --threshold 5 --json base/leanprofiler-summary.json new\n\n"
	"Exit status: 0 without regression, 1 with one or more; " LP_STATUS_USAGE " or "
	"when a recording cannot be read.\n";

enum { OPT_THRESHOLD = 1200, OPT_JSON };

static const struct argp_option diff_options[] = {
	{ "threshold", OPT_THRESHOLD, "PCT", 0,
	  "A row regressed when its self time or P95 grew by more than PCT percent (and its "
	  "calls are slower by the rank test); default " LP_STR(LP_DIFF_THRESHOLD), 0 },
	{ "json", OPT_JSON, NULL, 0, "The comparison as JSON (schema leanprofiler-diff/1)", 0 },
	{ 0 },
};

struct diff_args {
	struct lp_diff_opts o;
	const char *paths[2];
	int n;
};

static error_t diff_parse(int key, char *arg, struct argp_state *state)
{
	struct diff_args *a = state->input;
	char *end;

	switch (key) {
	case OPT_THRESHOLD:
		errno = 0;
		a->o.threshold = strtod(arg, &end);
		if (errno || *end || end == arg || !(a->o.threshold >= 0) ||
		    a->o.threshold > 1e6)
			return lp_usage_error(state, "invalid --threshold '%s': a percentage, 0 or more",
					 arg);
		break;
	case OPT_JSON:
		a->o.json = true;
		break;
	case ARGP_KEY_ARG:
		if (a->n == 2)
			return lp_usage_error(state, "two recordings: BASE and NEW");
		a->paths[a->n++] = arg;
		break;
	case ARGP_KEY_END:
		if (a->n != 2)
			return lp_usage_error(state, "two recordings: BASE and NEW");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int cmd_diff(int argc, char **argv)
{
	static const struct argp_child children[] = { LP_CLI_STD_CHILD, { 0 } };
	static const struct argp argp = { diff_options, diff_parse, "BASE NEW", diff_doc, children,
					  NULL, NULL };
	struct diff_args a = { .o = { .threshold = LP_DIFF_THRESHOLD } };
	struct lp_summary base, now;
	size_t regressions = 0;
	int err, status;

	argv[0] = "leanprofiler diff";
	if (!lp_cli_parse(&argp, argc, argv, 0, &a, &status))
		return status;
	if (lp_summary_read(a.paths[0], &base))
		return LP_EXIT_FAILURE; /* said */
	if (lp_summary_read(a.paths[1], &now)) {
		lp_summary_free(&base);
		return LP_EXIT_FAILURE;
	}
	if (stdout_is_input("comparison")) {
		lp_summary_free(&base);
		lp_summary_free(&now);
		return LP_EXIT_FAILURE;
	}
	err = lp_diff_print(stdout, &base, &now, &a.o, &regressions);
	lp_summary_free(&base);
	lp_summary_free(&now);
	if (fflush(stdout) && !err) {
		lp_err("cannot write the comparison: %s", strerror(errno));
		err = -EIO;
	}
	if (err)
		return LP_EXIT_FAILURE;
	return regressions ? LP_EXIT_REGRESSION : 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "record", cmd_record, "record the spans of a command, a process or a binary" },
	{ "top", cmd_top, "record and show a live table, refreshed every interval" },
	{ "report", cmd_report, "a recording again: table, threads, tree, folded, pictures" },
	{ "diff", cmd_diff, "compare two recordings; exit 1 when a row became slower" },
	{ "list", cmd_list, "list the USDT probes of a binary or a process (no root)" },
	{ "export", cmd_export, "send recordings to ClickHouse: runs, summary rows, spans" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: leanprofiler COMMAND [OPTIONS]\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'leanprofiler help COMMAND' or 'leanprofiler COMMAND --help' describes\n"
		   "each (leanprofiler-COMMAND(1) in full). Exit status: 125 for a bad command\n"
		   "line; each command's --help lists its own.\n");
}

static bool is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h") || !strcmp(arg, "-?") ||
	       !strcmp(arg, "help");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return LP_EXIT_USAGE;
	}
	/* leanprofiler help CMD: CMD's --help, as git help and perf help. */
	if (!strcmp(argv[1], "help") && argc == 3) {
		char *help_argv[] = { argv[2], "--help", NULL };

		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			if (!strcmp(argv[2], commands[i].name))
				return commands[i].fn(2, help_argv);
	}
	if (is_help(argv[1]) && (argc == 2 || strcmp(argv[1], "help"))) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("leanprofiler %s\n", LP_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help"))
		lp_err("help takes one command: record, top, report, diff, list or export");
	else
		lp_err("unknown command '%s' (try 'leanprofiler --help')", argv[1]);
	return LP_EXIT_USAGE;
}
