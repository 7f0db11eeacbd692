/*
 * rules.h — the special cases of rules.txt, the one data file of exceptions
 * to the classifier's general rules. Each line is a directive and its
 * arguments; `#` starts a comment. A rule that matches nothing in the header
 * being generated is reported by rules_unmatched(). FUNCTION is a function's
 * public name (cuMemAlloc) or the symbol its header declares
 * (cuMemAlloc_v2): a rule naming the symbol follows a function that another
 * release declares under that name (12.x's cuGraphAddDependencies_v2).
 *
 *   value-handle TYPEDEF     an integer typedef bound as a class (CUdevice)
 *   value-class TYPEDEF      an integer typedef that gets a class for callers
 *                            to construct, while parameters of the type stay
 *                            plain ints (cuuint64_t)
 *   stream-protocol HANDLE   the handle class of streams: it implements the
 *                            CUDA stream protocol (__cuda_stream__), and its
 *                            parameters also take objects implementing it
 *   handle-cast FUNCTION PARAM HANDLE
 *                            the handle parameter also takes an object of
 *                            class HANDLE, which the header says may be
 *                            cast to the parameter's type (a CUkernel for
 *                            cuLaunchKernel's CUfunction f); in a header
 *                            without HANDLE it does not apply (reported)
 *   keep-gil FUNCTION        a trivial getter whose call does not detach
 *                            the thread state (measured; see BENCHMARKS.md)
 *   rename-param C_NAME PY_NAME
 *                            a parameter name that is a Python builtin or
 *                            keyword gets cuda.bindings' name (len → length)
 *   rename-param-in FUNCTION C_NAME PY_NAME
 *                            one function's parameter gets another Python
 *                            name (cuda.bindings follows a later header's
 *                            name); the C prototype in the docstring keeps
 *                            the header's. Takes precedence over rename-param
 *   inout FUNCTION PARAM     a T * parameter the driver reads and writes
 *   in FUNCTION PARAM        a non-const T * parameter that is an input
 *   out FUNCTION PARAM       a T * parameter that is an output where the
 *                            general rules would take an input
 *   fixed FUNCTION PARAM N   a T * parameter of exactly N elements
 *   count FUNCTION PARAM COUNT
 *                            the array PARAM is counted by COUNT (where the
 *                            general pairing by name cannot tell); COUNT-N
 *                            when it holds N fewer elements than COUNT says
 *   kernel-params FUNCTION PARAM KERNEL
 *                            `void **PARAM` holds the parameters of the
 *                            kernel KERNEL (a CUfunction parameter), packed
 *                            by the kernel parameter packer (bind_packer.h)
 *   callback FUNCTION FN DATA KIND
 *                            FN is a callback taking DATA back; it accepts a
 *                            Python callable (KIND host, stream or destroy:
 *                            see runtime/rt_callbacks.h) or a C address
 *   sync-callback FUNCTION FN TRAMPOLINE
 *                            FN is a callback the driver calls only on the
 *                            calling thread, during the call, without user
 *                            data; it accepts a Python callable, called
 *                            through the runtime's TRAMPOLINE (a function of
 *                            runtime/bind_sync_callback.h of FN's exact
 *                            type), or a C address
 *   attribute-output FUNCTION DATA ATTR
 *                            `void *DATA` receives a value whose type depends
 *                            on the value of the enum parameter ATTR
 *   attribute-input FUNCTION DATA ATTR
 *                            `void *DATA` points to a value the caller gives,
 *                            typed by the value of ATTR as for outputs
 *   attribute-type ENUMERATOR TYPE
 *                            the type of the value an attribute-output
 *                            returns for ENUMERATOR (a typedef of the header,
 *                            or int, unsigned, size_t, _Bool; char[N] for a
 *                            string of up to N - 1 chars; T[] for as many T
 *                            as the byte size given by a `count` rule holds);
 *                            unlisted ones are read as unsigned long long.
 *                            A `count` rule on an attribute value names its
 *                            byte size: an input, or a size_t * the binding
 *                            sets from the type
 *   unloads-kernels FUNCTION a successful call may free CUfunctions, whose
 *                            values the driver can reuse: the packer's
 *                            cached parameter layouts are forgotten
 *   kernel-code FUNCTION WHEN
 *                            FUNCTION loads, links or unloads kernel code:
 *                            cbs_code_WHEN_FUNCTION (bind_kernel_code.h)
 *                            gets the driver's arguments, before the call
 *                            (WHEN `before`) or after a successful one
 *                            (`after`), to keep the parameter types the
 *                            code's PTX declares
 *   kernel-extra FUNCTION PARAM
 *                            `void **PARAM` is a launch's `extra` list;
 *                            when the function's kernel-params parameter
 *                            comes before it, plain values packed into one
 *                            buffer go to the driver through PARAM when
 *                            the caller's extra is None (bind_packer.h)
 *   kernel-params-field RECORD FIELD FUNC KERN
 *                            the `void **FIELD` of struct RECORD (tag or
 *                            typedef) takes every kernelParams form; plain
 *                            values are typed by the CUfunction field FUNC,
 *                            or when it is NULL by the CUkernel field KERN
 *                            (`-`: none). The packed buffer is owned by the
 *                            struct object (bind_struct.h)
 *   kernel-extra-field RECORD FIELD
 *                            the `void **FIELD` of RECORD takes every form
 *                            of a launch's `extra`
 *   field-count RECORD FIELD COUNT
 *                            the `T *FIELD` of RECORD (tag or typedef)
 *                            points at an array of COUNT elements T (an
 *                            integer field of RECORD): it also takes a
 *                            list of T, copied into an array the struct
 *                            object owns. T's type decides the kind: a
 *                            record of the header reads back as a list of
 *                            views of that array; a handle class (an
 *                            opaque handle, or an integer typedef of a
 *                            value-handle / value-class rule) takes handles
 *                            of that class or ints and reads back as a list
 *                            of handles of the values. COUNT stays the
 *                            caller's to set and is checked against the
 *                            owned array's length when the struct is
 *                            passed to a call (bind_struct.h). Reported
 *                            when FIELD is not a pointer to a record or a
 *                            handle, or COUNT not an integer
 *   registry-kind HANDLE CONSTANT
 *                            handles of type HANDLE are registered in the
 *                            shared registry under kind CONSTANT (cubind_rt.h)
 *   registry-create FUNCTION OUTPUT DEP
 *                            on success the handle OUTPUT is registered
 *                            (replacing a stale entry of that value); it
 *                            depends on the entry of handle parameter DEP
 *                            (`-`: none), which then lives at least as long
 *   registry-owned FUNCTION OUTPUT OWNER
 *                            on success OUTPUT is registered as part of
 *                            OWNER's entry: OWNER depends on it and unmaps
 *                            it when destroyed (a graph's nodes)
 *   registry-destroy FUNCTION PARAM
 *                            on success PARAM's entry is unregistered
 *   registry-keep FUNCTION STRUCT TARGET
 *                            on success the Python objects the struct
 *                            argument STRUCT keeps become keep-alives of
 *                            TARGET's entry (registered now if it was not)
 *   registry-depend FUNCTION PARAM DEP
 *                            on success PARAM's entry depends on DEP's
 *   undo FUNCTION UNDO ARG...
 *                            FUNCTION creates something that UNDO releases:
 *                            when its driver call succeeded but the result
 *                            could not be built (MemoryError), the binding
 *                            calls UNDO (its proc slot; nothing when it does
 *                            not resolve) with the ARGs, keeping the error.
 *                            An ARG is a parameter of FUNCTION (a scalar
 *                            output such as object_out: its value after the
 *                            call; or a scalar input) or an integer literal;
 *                            as many as UNDO takes (1 to 6). The registry
 *                            entry a registry-create rule made for an ARG is
 *                            unregistered when UNDO succeeds. Checked by
 *                            classify_undo (gen/classify.h): a wrong count
 *                            or an unknown parameter is a path:line error
 *                            where both functions exist; a rule naming a
 *                            function the header lacks matches nothing
 */
#ifndef CUBIND_RULES_H
#define CUBIND_RULES_H

#include <stddef.h>
#include <stdio.h>

#include "model.h"

/* The most arguments a directive takes (`undo`: FUNCTION, UNDO and up to
 * six arguments of UNDO). */
#define CB_RULE_MAX_ARGS 8

typedef struct {
    char *directive;
    char *args[CB_RULE_MAX_ARGS];
    size_t nargs;
    unsigned line;
    int used;                 /* set by the stages that consult the rule */
} cb_rule;

typedef struct {
    char *path;
    cb_rule *rules;
    size_t nrules;
} cb_rules;

/* Loads rules from path. Returns NULL and writes "path:line: message" into
 * err on a syntax error, an unknown directive or a directive with a number
 * of arguments it does not take. */
cb_rules *rules_load(const char *path, char *err, size_t errlen);
void rules_free(cb_rules *r);
/* The rule `directive name` if present (marking it used), else NULL: the
 * first rule of that directive whose first argument is `name`. Safe for any
 * directive (one of no arguments never matches). */
cb_rule *rules_find(const cb_rules *r, const char *directive, const char *name);
/* The rule `directive function param` if present (marking it used), else
 * NULL: the first rule of that directive whose first two arguments are
 * `function` and `param`. Safe for any directive: a rule of fewer than two
 * arguments (`value-handle T`) never matches, it is not read past its
 * nargs. */
cb_rule *rules_find2(const cb_rules *r, const char *directive, const char *function,
                     const char *param);
/* The rule `directive F` (param NULL) or `directive F param` of function f
 * (marking it used), where F is f's public name (cuMemAlloc) or, when no
 * rule names that, the symbol its header declares (cuMemAlloc_v2): one rule
 * then follows a function across releases that renamed it (12.x declares
 * cuGraphAddDependencies_v2 under that name, 13.0 as
 * cuGraphAddDependencies). */
cb_rule *rules_find_fn(const cb_rules *r, const char *directive, const cb_function *f,
                       const char *param);
/* Whether a rule's function name `name` names f: its public name or its
 * declared symbol. */
int rules_names_function(const char *name, const cb_function *f);
/* The function a rule's name names (public name first, then declared
 * symbol), or NULL. */
const cb_function *rules_function(const cb_model *m, const char *name);
/* Writes "path:line: rule 'directive name' matches nothing in HEADER" to
 * out for each rule naming a typedef or function the model lacks (by public
 * name or declared symbol; `undo`: either function; `handle-cast`: also its
 * class); returns how many. */
size_t rules_unmatched(const cb_rules *r, const cb_model *m, FILE *out);

#endif
