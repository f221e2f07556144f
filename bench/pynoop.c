// SPDX-License-Identifier: MIT
/*
 * The baseline of bench/python.sh: a context manager written in C that does
 * nothing. noop(*args, **kwargs) makes an object (its arguments ignored),
 * whose __enter__ returns it and __exit__ returns None: what any C context
 * manager called with a span's arguments costs at least.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyTypeObject NoopType;

static PyObject *noop_enter(PyObject *self, PyObject *unused)
{
	Py_INCREF(self);
	return self;
}

static PyObject *noop_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	Py_RETURN_NONE;
}

static PyMethodDef noop_methods[] = {
	{ "__enter__", noop_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)(void (*)(void))noop_exit, METH_FASTCALL, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject NoopType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pynoop.Noop",
	.tp_basicsize = sizeof(PyObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_methods = noop_methods,
};

static PyObject *noop(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	return PyObject_New(PyObject, &NoopType);
}

static PyMethodDef methods[] = {
	{ "noop", (PyCFunction)(void (*)(void))noop, METH_FASTCALL | METH_KEYWORDS, NULL },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, .m_name = "pynoop", .m_size = -1,
				     .m_methods = methods };

PyMODINIT_FUNC PyInit_pynoop(void)
{
	if (PyType_Ready(&NoopType) < 0)
		return NULL;
	return PyModule_Create(&module);
}
