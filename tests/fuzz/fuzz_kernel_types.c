/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_kernel_types.c — libFuzzer target for the kernel-typing parsers of
 * runtime/module/bind_kernel_types.c: the mangled-name demangler, the PTX
 * and fat-binary readers (an image of known length, and a file read in
 * parts), the code-image size check and the type strings of argtypes=. The first byte chooses the
 * parser, the rest is its input, copied into a heap block of exactly its
 * size (plus the NUL a C string has): under ASan a read past the end is a
 * heap-buffer-overflow. Outcomes are checked where the contract says more
 * than "no crash": a table's types of one entry have the sizes the entry
 * was found with, and image_fits' verdict agrees with what it reports.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bind_kernel_types.h"

enum { MANGLED, IMAGE, IMAGE_FITS, TYPE_STRING, NMODES };

/* a code file in memory for cbs_kt_table_from_reader */
typedef struct {
    const char *p;
    size_t size;
} mem_file;

static int mem_read(void *src, uint64_t at, void *buf, size_t n)
{
    const mem_file *f = src;
    if (at > f->size || n > f->size - at)
        return 0;
    memcpy(buf, f->p + at, n);
    return 1;
}

/* what the first byte's mode gets: a C string (n bytes + NUL) or bytes */
static char *copy(const uint8_t *data, size_t n, int nul)
{
    char *p = malloc(n + (size_t)nul + (n + (size_t)nul == 0));
    if (!p)
        abort();
    if (n)
        memcpy(p, data, n);
    if (nul)
        p[n] = '\0';
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int mode = data[0] % NMODES;
    unsigned arg = data[0] / NMODES; /* a parameter count for MANGLED */
    data++, size--;
    switch (mode) {
    case MANGLED: {
        char *name = copy(data, size, 1);
        cbs_ktype out[64];
        size_t n = arg % 64;
        if (cbs_kt_from_mangled(name, n, out))
            for (size_t k = 0; k < n; k++)
                if (CBS_KT_KIND(out[k]) > CBS_KT_BLOB)
                    abort();
        free(name);
        break;
    }
    case IMAGE: {
        /* A fat binary wrapper holds the address of its fat binary, which
         * is read as the driver reads it (as in C): not fuzzed here. */
        uint32_t magic = 0;
        memcpy(&magic, data, size < 4 ? size : 4);
        if (magic == 0x466243B1u)
            break;
        /* length given (a Python buffer), and as a file read in parts */
        char *image = copy(data, size, 0);
        cbs_kt_table_free(cbs_kt_table_from_image(image, size));
        mem_file f = {image, size};
        cbs_kt_table_free(cbs_kt_table_from_reader(mem_read, &f, size));
        free(image);
        /* length unknown (an int address), for text only: a fat binary of
         * unknown length is read as far as its own sizes say, as the
         * driver reads it */
        if (magic == 0xBA55ED50u)
            break;
        char *text = copy(data, size, 1);
        cbs_kt_table *t = cbs_kt_table_from_image(text, 0);
        cbs_ktype out[512];
        if (t && cbs_kt_table_find(t, "k", arg % 8, out))
            for (size_t k = 0; k < arg % 8; k++)
                if (CBS_KT_KIND(out[k]) > CBS_KT_BLOB)
                    abort();
        cbs_kt_table_free(t);
        free(text);
        break;
    }
    case IMAGE_FITS: {
        char *image = copy(data, size, 0);
        unsigned long long need;
        int r = cbs_kt_image_fits(image, size, arg & 1, &need);
        if (r == CBS_IMAGE_SHORT && need <= size)
            abort(); /* short, yet it needs no more than it has */
        free(image);
        break;
    }
    case TYPE_STRING: {
        char *s = copy(data, size, 1);
        cbs_ktype t;
        if (cbs_kt_from_string(s, &t) && (CBS_KT_SIZE(t) == 0 || CBS_KT_SIZE(t) > 8))
            abort();
        free(s);
        break;
    }
    }
    return 0;
}
