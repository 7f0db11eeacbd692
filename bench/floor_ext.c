/* SPDX-License-Identifier: Apache-2.0 */
/*
 * floor_ext.c — the benchmark's floor: `_bench_floor`, a CPython extension
 * whose functions do nothing, called the way cubind's functions are called.
 *
 *   call(*args)           returns None; METH_FASTCALL | METH_KEYWORDS, as
 *                         every generated cubind function is
 *   call_detached(*args)  the same, detaching from the interpreter and
 *                         attaching again around nothing (releasing and
 *                         retaking the GIL on GIL builds), as cubind does
 *                         around every driver call that can wait
 *
 * bench.py times them with each case's shape (same number of calls and
 * arguments, detaching where cubind's function detaches): that is the least
 * any binding written as a CPython extension can cost for the case, so the
 * report can say how much of a binding's time above C is its own.
 *
 * On a free-threaded build its functions are made immortal, as cubind's are
 * (cbs_make_immortal): eight threads calling the same function object then
 * do not contend on its reference count, so bench/ft_threads.py's floor
 * case scales as a binding with no shared writes can.
 *
 * Benchmark-only: the bench and ft-threads suites of scripts/gpu-run
 * build it; nothing ships it.
 */
#include "cubind_compat.h" /* cbs_make_immortal; -Iruntime/include */

static PyObject *floor_call(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    (void)module;
    (void)args;
    (void)nargs;
    (void)kwnames;
    Py_RETURN_NONE;
}

static PyObject *floor_call_detached(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    (void)module;
    (void)args;
    (void)nargs;
    (void)kwnames;
    Py_BEGIN_ALLOW_THREADS
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyMethodDef floor_methods[] = {
    {"call", (PyCFunction)(void (*)(void))floor_call, METH_FASTCALL | METH_KEYWORDS,
     "call(*args): does nothing; returns None."},
    {"call_detached", (PyCFunction)(void (*)(void))floor_call_detached,
     METH_FASTCALL | METH_KEYWORDS,
     "call_detached(*args): detaches from the interpreter and attaches again; returns None."},
    {NULL, NULL, 0, NULL},
};

/* The main interpreter's functions become immortal (free-threaded builds;
 * elsewhere cbs_make_immortal does nothing). */
static int floor_exec(PyObject *module)
{
    if (PyInterpreterState_Get() != PyInterpreterState_Main())
        return 0;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    PyObject *dict = PyModule_GetDict(module);
    while (PyDict_Next(dict, &pos, &key, &value))
        if (PyCFunction_Check(value))
            cbs_make_immortal(value);
    return 0;
}

static PyModuleDef_Slot floor_slots[] = {
    {Py_mod_exec, (void *)floor_exec},
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_GIL_DISABLED
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef floor_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_bench_floor",
    .m_doc = "The benchmark's floor: extension functions that do nothing.",
    .m_size = 0,
    .m_methods = floor_methods,
    .m_slots = floor_slots,
};

PyMODINIT_FUNC PyInit__bench_floor(void)
{
    return PyModuleDef_Init(&floor_module);
}
