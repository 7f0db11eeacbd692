/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/consumer/consumer_module.h — TEST-ONLY: the module definition every
 * consumer in this folder ends with. CONSUMER_MODULE(name, doc, methods,
 * exec) defines the extension `name` (PyInit_<name>, multi-phase init):
 * its functions `methods` (NULL for none), its exec slot `exec` (int
 * exec(PyObject *module), where the consumer imports its capsule tables),
 * and, on a free-threaded build, that it needs no GIL.
 */
#ifndef CUBIND_TESTS_CONSUMER_MODULE_H
#define CUBIND_TESTS_CONSUMER_MODULE_H

#include <Python.h>

#if PY_VERSION_HEX >= 0x030D0000
#define CONSUMER_GIL_SLOT {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#else
#define CONSUMER_GIL_SLOT
#endif

#define CONSUMER_MODULE(name, doc, methods, exec)                                                   \
    static PyModuleDef_Slot consumer_slots[] = {                                                    \
        {Py_mod_exec, (void *)(exec)}, CONSUMER_GIL_SLOT{0, NULL},                                  \
    };                                                                                              \
    static struct PyModuleDef consumer_def = {                                                      \
        PyModuleDef_HEAD_INIT, #name, doc, 0, methods, consumer_slots, NULL, NULL, NULL,            \
    };                                                                                              \
    PyMODINIT_FUNC PyInit_##name(void)                                                              \
    {                                                                                               \
        return PyModuleDef_Init(&consumer_def);                                                     \
    }

#endif
