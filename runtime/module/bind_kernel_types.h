/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_kernel_types.h — what a kernel's parameters are, where that can be
 * known: from the PTX a module was loaded from (each .entry's .param
 * list), from an Itanium-mangled C++ kernel name (cuFuncGetName), from a
 * type string of `argtypes=` ("f4", "i8", "p", ...). No Python here: the
 * packer (bind_packer.c) asks the driver for the name, reads `argtypes=`
 * objects, and applies the rules per type; bind_kernel_code.c keeps the
 * tables of loaded PTX.
 *
 * A parameter's type is a kind and a size in bytes. CBS_KT_UNKNOWN means
 * the packer types the value by the parameter's size (cuFuncGetParamInfo),
 * as it did before types were known.
 */
#ifndef CUBIND_BIND_KERNEL_TYPES_H
#define CUBIND_BIND_KERNEL_TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    CBS_KT_UNKNOWN = 0, /* typed by size */
    CBS_KT_INT,         /* a signed integer of `size` bytes */
    CBS_KT_UINT,        /* an unsigned integer */
    CBS_KT_BITS,        /* PTX's .uN / .bN: an integer of either sign (nvcc
                           declares int as .u32); 8 bytes: also a pointer */
    CBS_KT_BOOL,        /* bool: 0 or 1 */
    CBS_KT_FLOAT,       /* a floating type: size 2 (half), 4 (float), 8 (double) */
    CBS_KT_PTR,         /* a pointer (size 8) */
    CBS_KT_BLOB         /* a user type by value: bytes of exactly `size` */
} cbs_kt_kind;

/* One parameter's type: kind in the low 8 bits, declared size (0: the
 * driver's) in the 56 above, so that any size a parameter may have is
 * kept whole (a 24-bit size once wrapped 2**24 + 8 bytes to 8; the
 * packer's ctypes types stop at 1 GiB, PTX arrays at 10 * 2**20 elements
 * of 8 bytes). */
typedef uint64_t cbs_ktype;
#define CBS_KT(kind, size) ((uint64_t)(kind) | ((uint64_t)(size) << 8))
#define CBS_KT_KIND(t) ((cbs_kt_kind)((t) & 0xFFu))
#define CBS_KT_SIZE(t) ((size_t)((t) >> 8))

/* The parameter types of the kernel whose mangled name is `name`: 1 and
 * out[0..n) when the name is an Itanium-mangled function name with exactly
 * n parameters, all parsed; 0 otherwise (an extern "C" name, a construct
 * this parser does not know: then nothing is known). User types (classes,
 * enums) are CBS_KT_BLOB of size 0 (the driver reports it). */
int cbs_kt_from_mangled(const char *name, size_t n, cbs_ktype *out);

/* The kernels of PTX text, each with its parameter types: an immutable
 * block (cbs_kt_table_free releases it). */
typedef struct cbs_kt_table cbs_kt_table;

/* The .entry directives of the PTX in `image`: PTX text (NUL-terminated,
 * as the driver takes it), or a fat binary (or its wrapper) holding PTX,
 * plain or compressed (LZ4 or Zstandard, bind_fatbin_codec.h: decoded
 * into a block of the size its entry declares, at most 1 GiB); `len`
 * bounds the image when known (0: unknown, then a fat binary's own sizes
 * and the text's NUL bound it). NULL when the image holds no PTX entry
 * this parser reads (a cubin, PTX compressed with Zstandard where
 * libzstd.so.1 is missing, a payload that does not decode), or when out of
 * memory. */
cbs_kt_table *cbs_kt_table_from_image(const void *image, size_t len);

/* Reads n bytes at offset `at` of a source (a file) into buf: 1 when all
 * of them were read, else 0. */
typedef int (*cbs_kt_read_fn)(void *src, uint64_t at, void *buf, size_t n);

/* The .entry directives of a code file of `size` bytes, read through
 * `read` without a copy of the whole file: a fat binary's headers and its
 * PTX payloads as stored, one at a time (decoded as above; its other
 * entries are skipped unread); a text's first 4 KiB, then all of it only when it begins as PTX
 * does (up to 1 GiB); nothing more of anything else (an ELF cubin). NULL
 * as cbs_kt_table_from_image. */
cbs_kt_table *cbs_kt_table_from_reader(cbs_kt_read_fn read, void *src, uint64_t size);

/* Whether a code image given as a buffer of len bytes holds all that the
 * driver reads of it, by what its contents say: PTX text (anything not
 * below) up to its NUL, within len or at len when nul_after (a bytes
 * object's terminator); a fat binary its header's entries size; an ELF64
 * cubin its header and header tables; a fat binary wrapper its 16
 * bytes (the data it points to is an address, unchecked). CBS_IMAGE_OK, or
 * what is wrong, with *need the bytes the image declares (SHORT). Reads
 * no byte at or past len. */
enum { CBS_IMAGE_OK, CBS_IMAGE_NO_NUL, CBS_IMAGE_SHORT };
int cbs_kt_image_fits(const void *image, size_t len, int nul_after, unsigned long long *need);

/* A table holding a's and b's entries (a's first; either may be NULL):
 * new, or NULL when both are NULL or out of memory. a and b stay. */
cbs_kt_table *cbs_kt_table_merge(const cbs_kt_table *a, const cbs_kt_table *b);

void cbs_kt_table_free(void *table);

/* A copy of t (NULL: out of memory, or t NULL) marked with `origin`, an
 * opaque nonzero value never dereferenced (bind_kernel_code.c: the registry
 * entry of the library it was copied from); cbs_kt_table_origin reads the
 * mark back (0 for a table not made here). */
cbs_kt_table *cbs_kt_table_derive(const cbs_kt_table *t, uintptr_t origin);
uintptr_t cbs_kt_table_origin(const cbs_kt_table *t);

/* Entry `name`'s parameter types: 1 and out[0..n) when the table has one
 * entry of that name with n parameters; 0 otherwise. */
int cbs_kt_table_find(const cbs_kt_table *t, const char *name, size_t n, cbs_ktype *out);

/* A type string of argtypes= ("f4", "<i8", "u2", "b1", "?", "p", "f8",
 * and numpy's names "float32", "int64", "uint8", "bool", ...): 1 and *out,
 * or 0 when not one. */
int cbs_kt_from_string(const char *s, cbs_ktype *out);

/* The C name of t for messages ("float", "int", "unsigned long long",
 * "a pointer", "a 12-byte struct"), written into buf. */
const char *cbs_kt_name(cbs_ktype t, size_t size, char *buf, size_t cap);

#endif
