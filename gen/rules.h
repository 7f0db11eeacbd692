/* SPDX-License-Identifier: Apache-2.0 */
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
 *                            see runtime/process/rt_callbacks.h) or a C address
 *   sync-callback FUNCTION FN TRAMPOLINE
 *                            FN is a callback the driver calls only on the
 *                            calling thread, during the call, without user
 *                            data; it accepts a Python callable, called
 *                            through the runtime's TRAMPOLINE (a function of
 *                            runtime/module/bind_sync_callback.h of FN's exact
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
 *                            code's PTX declares (the driver's rules only:
 *                            a library API's are ignored)
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
 *   field-count-out RECORD FIELD COUNT
 *                            the `T *FIELD` of RECORD points at an array of
 *                            COUNT handles T that the driver owns and
 *                            writes (phGraph_out): set like any pointer
 *                            field, it reads back as a list of COUNT
 *                            handles read from that array, zero handles
 *                            while it is NULL. Reported when FIELD is not
 *                            a pointer to a handle or COUNT not an integer
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
 *
 * What the API is — one rules file per API (gen/rules.txt: the driver,
 * gen/nvrtc.rules, gen/nvjitlink.rules). Absent, the driver's values hold:
 *   header FILE              the header the rules bind, in the CUDA include
 *                            directory (read by configure and the tests to
 *                            pair each gen/<api>.rules with its header)
 *   module DROPIN RAISING    the Python modules cubind.DROPIN (status
 *                            tuples) and cubind.RAISING (raising); `-`
 *                            for a face the API does not have
 *   result ENUM SUCCESS      the result enum every bound function returns,
 *                            and its success enumerator
 *   error-class NAME         the exception class of the raising face
 *                            (cubind.NAME)
 *   error-string FUNCTION    `const char *FUNCTION(ENUM)` describes a result
 *                            (the exception's message); also bound
 *   library SONAME           the API is a shared library resolved by dlsym
 *                            (no cudaTypedefs.h, no cuGetProcAddress), tried
 *                            under each SONAME in order (runtime/library/bind_library.h)
 *   library-env VAR          the environment variable naming the library file
 *   library-wheel DIR        where NVIDIA's pip wheels put it, relative to
 *                            site-packages/nvidia (one rule per layout)
 *   python-names PREFIX STYLE
 *                            Python names of functions and enums: PREFIX
 *                            stripped, then STYLE `snake` (nvJitLinkAddData
 *                            -> add_data, numOptions -> num_options; enum
 *                            members lose the enum's common prefix) or
 *                            `keep`
 *   int-handles              opaque handles cross as plain ints (addresses),
 *                            not as handle classes
 *   capi-sentinel VALUE      the result a C API entry point (the capsule
 *                            cubind.<module>._C_API) returns with a Python
 *                            exception set (the driver: CUDA_ERROR_NOT_FOUND)
 * Parameters and results:
 *   in-place FUNCTION PARAM  `H *PARAM` of a handle H the call reads and
 *                            clears (a destroy): a handle object is passed
 *                            by the address of its own value (getPtr()), so
 *                            it holds NULL afterwards, as in cuda.bindings
 *   buffer-size FUNCTION PARAM SIZEFN
 *                            `char *` / `void *PARAM` is the caller's buffer
 *                            (bytes, as cuda.bindings writes into it, or any
 *                            writable buffer, or an address), which must hold
 *                            what SIZEFN(first argument, &size) says: a
 *                            smaller buffer is a ValueError, before the call
 *   error-log FUNCTION PARAM SIZEFN LOGFN
 *                            when FUNCTION fails, the raising face's
 *                            exception carries in `log` what LOGFN(PARAM,
 *                            buffer) writes (SIZEFN(PARAM, &size) bytes)
 *
 *   host-bytes OWNER BUFFER ACCESS SIZE [KEY=NAME...]
 *                            the `void *BUFFER` parameter of function
 *                            OWNER, or field of record OWNER (tag or
 *                            typedef), is host memory the driver `reads`
 *                            or `writes` (ACCESS) through: given a Python
 *                            buffer, the binding checks before the call
 *                            that it holds the bytes the call touches, and
 *                            that it is writable for `writes` (an int
 *                            address stays unchecked, as in C). SIZE (a
 *                            parameter or field) is the bytes of one row;
 *                            for a field the optional terms, fields of the
 *                            same record, give a box: rows= (rows of SIZE
 *                            bytes), depth= (slices), pitch= (bytes from
 *                            row to row), slice= (rows from slice to
 *                            slice), x= y= z= (the first byte, row and
 *                            slice), when=FIELD:ENUMERATOR (checked only
 *                            while that enum field holds it). The bytes
 *                            needed are ((z + depth - 1) * slice + y +
 *                            rows - 1) * pitch + x + SIZE, none when SIZE,
 *                            rows or depth is 0 (absent: rows and depth
 *                            1, the rest 0). Checked by host_bytes_check
 *                            (gen/host_bytes.h): a path:line error where
 *                            the owner exists but the rule does not fit it
 */
#ifndef CUBIND_RULES_H
#define CUBIND_RULES_H

#include <stddef.h>
#include <stdio.h>

#include "model.h"

/* The most arguments a directive takes (`host-bytes`: OWNER, BUFFER,
 * ACCESS, SIZE and up to eight KEY=NAME terms). */
#define CB_RULE_MAX_ARGS 12

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
/* The field `field` of a record named `record` (tag, name or typedef), or
 * NULL: a rule's RECORD FIELD arguments. */
const cb_field *rules_record_field(const cb_model *m, const char *record, const char *field);
/* Writes "path:line: rule 'directive name' matches nothing in HEADER" to
 * out for each rule naming a typedef or function the model lacks (by public
 * name or declared symbol; `undo`: either function; `handle-cast`: also its
 * class); returns how many. out NULL: only counts them. */
size_t rules_unmatched(const cb_rules *r, const cb_model *m, FILE *out);

#define CB_API_MAX_LIBS 8

/* The API directives of a rules file, the driver's values where absent.
 * Strings point into the rules. */
typedef struct {
    const char *dropin, *raising;   /* module names; NULL for a face not made */
    const char *result, *success;   /* result enum and its success value */
    const char *error_class;        /* cubind.<error_class> */
    const char *error_string;       /* NULL when none */
    int is_library;                 /* a `library` rule: dlsym, no cudaTypedefs.h */
    const char *libs[CB_API_MAX_LIBS];
    size_t nlibs;
    const char *env;                /* NULL when none */
    const char *wheels[CB_API_MAX_LIBS];
    size_t nwheels;
    const char *name_prefix;        /* "" when none */
    int snake;                      /* python-names ... snake */
    int int_handles;                /* int-handles: opaque handles are plain ints */
    const char *capi_sentinel;      /* what a C API entry returns having raised */
} cb_api;

/* Fills api from r's API directives (marking them used). */
void rules_api(const cb_rules *r, cb_api *api);
/* Whether a directive is one of the API directives above (never reported
 * as unmatched when the header has what it names). */
int rules_is_api(const char *directive);
int rules_api_matches(const cb_model *m, const cb_rule *rule);
/* Whether any rule of the directive is present (marking it used). */
int rules_has(const cb_rules *r, const char *directive);
/* A function's or parameter's Python name under the API's python-names
 * rule (malloc'ed): its prefix stripped, snake_case when asked. */
char *rules_python_name(const cb_api *api, const char *name);

#endif
