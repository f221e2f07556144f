// SPDX-License-Identifier: MIT
/*
 * leanprofiler._native: the span markers of include/leanprofiler.h for Python.
 *
 * Every marker here is the C header's own (LP_SPAN_ENTER and friends), so the
 * probes, their arguments, the semaphore, the warm-up and the fork handling
 * are exactly a C program's and `leanprofiler record` needs nothing new. What
 * differs is only where the texts come from:
 * - a name is the UTF-8 of a str (or the bytes of a bytes), held by the span
 *   object or by the caller for the whole call: a runtime string, flagged so,
 *   so the kernel copies it at every marker. Never a "literal": a str's buffer
 *   is freed with the str and its address given to another text, which a
 *   literal's once-per-address copy would then name wrongly;
 * - metadata is built from keyword arguments ("k=v, k=v", in the order given)
 *   into a buffer on the stack, only while a profiler is attached.
 * Not attached, a span costs its object and the semaphore's load: nothing is
 * encoded, formatted or converted.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "leanprofiler.h"

/*
 * The metadata text built for a marker: the kernel keeps 512 bytes
 * (LP_META_MAX, bpf/wire.h) and reads one more to know it cut; what passes
 * this buffer is never read, so it is cut here (the kernel then counts the cut).
 */
#define LP_PY_META_BUF 1024

/* ---- texts ---- */

/*
 * The bytes of a name or key: a str's UTF-8 (cached in the str, alive as long
 * as it is), or a bytes' own. A str that has no UTF-8 (lone surrogates, as
 * os.fsdecode() makes of undecodable bytes) is encoded with surrogateescape,
 * which gives those bytes back, or else backslashreplace; *keep then holds
 * the new bytes object (the caller releases it). NULL with an exception only
 * for an object that is neither str nor bytes.
 */
static const char *text_of(PyObject *o, Py_ssize_t *len, PyObject **keep)
{
	const char *s;

	*keep = NULL;
	if (PyBytes_Check(o)) {
		*len = PyBytes_GET_SIZE(o);
		return PyBytes_AS_STRING(o);
	}
	if (!PyUnicode_Check(o)) {
		PyErr_Format(PyExc_TypeError, "a span name must be str or bytes, not %.100s",
			     Py_TYPE(o)->tp_name);
		return NULL;
	}
	s = PyUnicode_AsUTF8AndSize(o, len);
	if (s)
		return s;
	PyErr_Clear();
	*keep = PyUnicode_AsEncodedString(o, "utf-8", "surrogateescape");
	if (!*keep) {
		PyErr_Clear();
		*keep = PyUnicode_AsEncodedString(o, "utf-8", "backslashreplace");
	}
	if (!*keep)
		return NULL; /* out of memory: its exception stands */
	*len = PyBytes_GET_SIZE(*keep);
	return PyBytes_AS_STRING(*keep);
}

/* A name type check, made whether attached or not, so a program behaves the same either way. */
static int check_name(PyObject *name)
{
	if (PyUnicode_Check(name) || PyBytes_Check(name))
		return 0;
	PyErr_Format(PyExc_TypeError, "a span name must be str or bytes, not %.100s",
		     Py_TYPE(name)->tp_name);
	return -1;
}

struct metabuf {
	char b[LP_PY_META_BUF];
	size_t n;
};

static void put_bytes(struct metabuf *m, const char *s, size_t len)
{
	size_t room = sizeof(m->b) - 1 - m->n;

	if (len > room)
		len = room;
	memcpy(m->b + m->n, s, len);
	m->n += len;
}

/*
 * A key or value into the metadata. The reader splits the text at ',' into
 * items and each at its first '=' (docs/formats.md): a ',' of a value, or a
 * '=' of a key, would split one keyword argument into several, so they become
 * U+FF0C and U+FF1D (as span specs do with strings: docs/span-spec.md). A NUL
 * would end the C string and every item after it: it becomes U+FFFD.
 */
static void put_item_text(struct metabuf *m, const char *s, size_t len, int is_key)
{
	for (size_t i = 0; i < len && m->n < sizeof(m->b) - 1; i++) {
		if (s[i] == ',')
			put_bytes(m, "\xef\xbc\x8c", 3);
		else if (s[i] == '=' && is_key)
			put_bytes(m, "\xef\xbc\x9d", 3);
		else if (s[i] == '\0')
			put_bytes(m, "\xef\xbf\xbd", 3);
		else
			m->b[m->n++] = s[i];
	}
}

/* A key or a value: its text, or str() of it; "?" when str() fails (never an exception). */
static void put_object(struct metabuf *m, PyObject *o, int is_key)
{
	PyObject *str = NULL, *keep = NULL;
	const char *s = NULL;
	Py_ssize_t len = 0;

	if (PyUnicode_Check(o) || PyBytes_Check(o)) {
		s = text_of(o, &len, &keep);
	} else {
		str = PyObject_Str(o);
		if (str)
			s = text_of(str, &len, &keep);
	}
	if (s) {
		put_item_text(m, s, (size_t)len, is_key);
	} else {
		PyErr_Clear();
		put_bytes(m, "?", 1);
	}
	Py_XDECREF(keep);
	Py_XDECREF(str);
}

/* "k=v, k=v" of the keywords names and their values, NUL-terminated in m. */
static void build_meta(struct metabuf *m, PyObject *names, PyObject *const *values)
{
	Py_ssize_t n = PyTuple_GET_SIZE(names);

	m->n = 0;
	for (Py_ssize_t i = 0; i < n; i++) {
		if (i)
			put_bytes(m, ", ", 2);
		put_object(m, PyTuple_GET_ITEM(names, i), 1);
		put_bytes(m, "=", 1);
		put_object(m, values[i], 0);
	}
	m->b[m->n] = '\0';
}

/* ---- the markers, attached ---- */

static int mark_enter(PyObject *name, PyObject *meta_names, PyObject *const *meta_values,
		      PyObject *meta_text, int has_counter, uint64_t counter)
{
	PyObject *keep = NULL, *mkeep = NULL;
	Py_ssize_t len;
	const char *n = text_of(name, &len, &keep), *meta = NULL;
	struct metabuf m;

	if (!n)
		return -1;
	if (meta_names && PyTuple_GET_SIZE(meta_names)) {
		build_meta(&m, meta_names, meta_values);
		meta = m.b;
	} else if (meta_text) {
		meta = text_of(meta_text, &len, &mkeep);
		if (!meta) {
			Py_XDECREF(keep);
			return -1;
		}
	}
	/* A literal NULL for no metadata, as a C program writes it. */
	if (has_counter) {
		if (meta)
			LP_SPAN_ENTER_COUNTER(n, meta, counter);
		else
			LP_SPAN_ENTER_COUNTER(n, NULL, counter);
	} else {
		if (meta)
			LP_SPAN_ENTER(n, meta);
		else
			LP_SPAN_ENTER(n, NULL);
	}
	Py_XDECREF(mkeep);
	Py_XDECREF(keep);
	return 0;
}

static int mark_exit(PyObject *name, int has_counter, uint64_t counter)
{
	PyObject *keep = NULL;
	Py_ssize_t len;
	const char *n = text_of(name, &len, &keep);

	if (!n)
		return -1;
	if (has_counter)
		LP_SPAN_EXIT_COUNTER(n, counter);
	else
		LP_SPAN_EXIT(n);
	Py_XDECREF(keep);
	return 0;
}

/* ---- span objects ---- */

typedef struct {
	PyObject_VAR_HEAD
	PyObject *name;     /* str or bytes */
	PyObject *kwnames;  /* tuple of the metadata's keys, or NULL */
	PyObject *values[1]; /* ob_size values, in the order of kwnames */
} Span;

static PyTypeObject SpanType;

static void span_dealloc(Span *s)
{
	PyObject_GC_UnTrack(s);
	Py_XDECREF(s->name);
	Py_XDECREF(s->kwnames);
	for (Py_ssize_t i = 0; i < Py_SIZE(s); i++)
		Py_XDECREF(s->values[i]);
	PyObject_GC_Del(s);
}

static int span_traverse(Span *s, visitproc visit, void *arg)
{
	Py_VISIT(s->name);
	Py_VISIT(s->kwnames);
	for (Py_ssize_t i = 0; i < Py_SIZE(s); i++)
		Py_VISIT(s->values[i]);
	return 0;
}

static PyObject *span_enter(Span *s, PyObject *unused)
{
	if (LP_ACTIVE() && mark_enter(s->name, s->kwnames, s->values, NULL, 0, 0))
		return NULL;
	Py_INCREF(s);
	return (PyObject *)s;
}

/*
 * Exits whenever attached, also a span entered before the profiler was: the
 * recording shows it as begun before recording, as a C literal scope does.
 * Never suppresses the exception that ended the block.
 */
static PyObject *span_exit(Span *s, PyObject *const *args, Py_ssize_t nargs)
{
	if (LP_ACTIVE() && mark_exit(s->name, 0, 0))
		return NULL;
	Py_RETURN_FALSE;
}

static PyObject *span_repr(Span *s)
{
	return PyUnicode_FromFormat("leanprofiler.span(%R)", s->name);
}

static PyMethodDef span_methods[] = {
	{ "__enter__", (PyCFunction)span_enter, METH_NOARGS,
	  "Marks the span's enter (while a profiler is attached); returns the span." },
	{ "__exit__", (PyCFunction)(void (*)(void))span_exit, METH_FASTCALL,
	  "Marks the span's exit (while a profiler is attached); never suppresses an exception." },
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject SpanType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "leanprofiler.Span",
	.tp_basicsize = sizeof(Span) - sizeof(PyObject *),
	.tp_itemsize = sizeof(PyObject *),
	.tp_dealloc = (destructor)span_dealloc,
	.tp_repr = (reprfunc)span_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_doc = "A span: a context manager made by leanprofiler.span(name, **meta).\n\n"
		  "Reusable and re-entrant: it holds no state of its own beyond its name and\n"
		  "metadata, so one object may mark every call of a recursive function, in any\n"
		  "thread.",
	.tp_traverse = (traverseproc)span_traverse,
	.tp_methods = span_methods,
};

PyDoc_STRVAR(span_doc,
"span(name, /, **meta) -> Span\n"
"\n"
"A context manager marking a span: `with span(\"model.forward\", phase=\"forward\"):`.\n"
"\n"
"name: str (its UTF-8; a str holding undecodable bytes as os.fsdecode() makes them\n"
"gives those bytes back) or bytes. The keyword arguments are the metadata,\n"
"\"k=v, k=v\" in the order given, each value's str(); a ',' in a value (or a '=' in a\n"
"key) becomes a full-width one so it stays one item. Name and metadata are read\n"
"only at the enter, and only while a profiler is attached; the exit is marked at\n"
"the end of the block, also when it ends with an exception (not suppressed).\n"
"Not attached, the cost is this call and the object.");

static PyObject *lp_span(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
			 PyObject *kwnames)
{
	Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
	Span *s;

	if (nargs != 1) {
		PyErr_Format(PyExc_TypeError, "span() takes 1 positional argument (the name), %zd given",
			     nargs);
		return NULL;
	}
	if (check_name(args[0]))
		return NULL;
	s = PyObject_GC_NewVar(Span, &SpanType, nkw);
	if (!s)
		return NULL;
	Py_INCREF(args[0]);
	s->name = args[0];
	s->kwnames = NULL;
	if (nkw) {
		Py_INCREF(kwnames);
		s->kwnames = kwnames;
		for (Py_ssize_t i = 0; i < nkw; i++) {
			Py_INCREF(args[1 + i]);
			s->values[i] = args[1 + i];
		}
	}
	PyObject_GC_Track(s);
	return (PyObject *)s;
}

/* ---- enter, exit, active ---- */

/*
 * A counter: any int, taken modulo 2**64 (never an exception, attached or
 * not); None: no counter. -1 with TypeError for anything else.
 */
static int counter_of(PyObject *o, int *has, uint64_t *v)
{
	*has = 0;
	*v = 0;
	if (!o || o == Py_None)
		return 0;
	if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError, "a counter must be an int or None, not %.100s",
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	*has = 1;
	return 0;
}

static uint64_t counter_value(PyObject *o)
{
	uint64_t v = (uint64_t)PyLong_AsUnsignedLongLongMask(o);

	PyErr_Clear(); /* only for a non-int, excluded by counter_of() */
	return v;
}

/*
 * Positional and keyword arguments into out[0..n) by the names given
 * (out[i] NULL when absent): fastcall's calling convention without building a
 * dict or a tuple. -1 with TypeError.
 */
static int parse_args(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
		      const char *const *names, Py_ssize_t n, Py_ssize_t required, PyObject **out)
{
	Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;

	if (nargs > n) {
		PyErr_Format(PyExc_TypeError, "%s() takes at most %zd arguments (%zd given)", fn, n,
			     nargs);
		return -1;
	}
	for (Py_ssize_t i = 0; i < n; i++)
		out[i] = i < nargs ? args[i] : NULL;
	for (Py_ssize_t k = 0; k < nkw; k++) {
		PyObject *key = PyTuple_GET_ITEM(kwnames, k);
		Py_ssize_t i;

		for (i = 0; i < n; i++)
			if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0)
				break;
		if (i == n) {
			PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", fn,
				     key);
			return -1;
		}
		if (out[i]) {
			PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn,
				     names[i]);
			return -1;
		}
		out[i] = args[nargs + k];
	}
	for (Py_ssize_t i = 0; i < required; i++)
		if (!out[i]) {
			PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn,
				     names[i]);
			return -1;
		}
	return 0;
}

PyDoc_STRVAR(enter_doc,
"enter(name, meta=None, counter=None)\n"
"\n"
"Marks a span's enter: LP_SPAN_ENTER(name, meta), or with a counter (an int, a work\n"
"counter such as heartbeats so far, taken modulo 2**64) LP_SPAN_ENTER_COUNTER.\n"
"meta: None or the metadata text itself, \"k=v, k=v\" (str or bytes), as in C.\n"
"Pair it with exit(name) on the same thread. Does nothing unless a profiler is\n"
"attached (the arguments' types are checked either way).");

static PyObject *lp_enter(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
			  PyObject *kwnames)
{
	static const char *const names[] = { "name", "meta", "counter" };
	PyObject *a[3];
	int has;
	uint64_t v;

	if (parse_args("enter", args, nargs, kwnames, names, 3, 1, a) || check_name(a[0]) ||
	    counter_of(a[2], &has, &v))
		return NULL;
	if (a[1] == Py_None)
		a[1] = NULL;
	if (a[1] && check_name(a[1])) {
		PyErr_Format(PyExc_TypeError, "meta must be str, bytes or None, not %.100s",
			     Py_TYPE(a[1])->tp_name);
		return NULL;
	}
	if (LP_ACTIVE() && mark_enter(a[0], NULL, NULL, a[1], has, has ? counter_value(a[2]) : 0))
		return NULL;
	Py_RETURN_NONE;
}

PyDoc_STRVAR(exit_doc,
"exit(name, counter=None)\n"
"\n"
"Marks a span's exit: LP_SPAN_EXIT(name), or LP_SPAN_EXIT_COUNTER(name, counter)\n"
"with a counter. It closes the innermost span of that name open on this thread.");

static PyObject *lp_exit(PyObject *mod, PyObject *const *args, Py_ssize_t nargs,
			 PyObject *kwnames)
{
	static const char *const names[] = { "name", "counter" };
	PyObject *a[2];
	int has;
	uint64_t v;

	if (parse_args("exit", args, nargs, kwnames, names, 2, 1, a) || check_name(a[0]) ||
	    counter_of(a[1], &has, &v))
		return NULL;
	if (LP_ACTIVE() && mark_exit(a[0], has, has ? counter_value(a[1]) : 0))
		return NULL;
	Py_RETURN_NONE;
}

PyDoc_STRVAR(active_doc,
"active() -> bool\n"
"\n"
"True while a profiler is attached to this process's markers (LP_ACTIVE()): use it\n"
"to skip work done only for a span's name or metadata.");

static PyObject *lp_active(PyObject *mod, PyObject *unused)
{
	return PyBool_FromLong(LP_ACTIVE());
}

static PyMethodDef module_methods[] = {
	{ "span", (PyCFunction)(void (*)(void))lp_span, METH_FASTCALL | METH_KEYWORDS, span_doc },
	{ "enter", (PyCFunction)(void (*)(void))lp_enter, METH_FASTCALL | METH_KEYWORDS, enter_doc },
	{ "exit", (PyCFunction)(void (*)(void))lp_exit, METH_FASTCALL | METH_KEYWORDS, exit_doc },
	{ "active", lp_active, METH_NOARGS, active_doc },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "leanprofiler._native",
	.m_doc = "The span markers of include/leanprofiler.h (use the leanprofiler package).",
	.m_size = -1,
	.m_methods = module_methods,
};

/*
 * Built with -fvisibility=hidden: before 3.9, PyMODINIT_FUNC did not mark the
 * init function visible, and a 3.8 interpreter could not find it.
 */
__attribute__((visibility("default"))) PyMODINIT_FUNC PyInit__native(void)
{
	PyObject *m;

	if (PyType_Ready(&SpanType) < 0)
		return NULL;
	m = PyModule_Create(&module);
	if (!m)
		return NULL;
	Py_INCREF(&SpanType);
	if (PyModule_AddObject(m, "Span", (PyObject *)&SpanType) < 0) {
		Py_DECREF(&SpanType);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
