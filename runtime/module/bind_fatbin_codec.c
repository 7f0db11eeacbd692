/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_fatbin_codec.c — the payload codecs of fat-binary entries (see
 * bind_fatbin_codec.h).
 *
 * The LZ4 block format, as its public specification gives it: a block is
 * a series of sequences; each begins with a token byte whose high 4 bits
 * are a count of literal bytes and whose low 4 bits a match length less 4;
 * a 4-bit field of 15 continues in the bytes that follow (each added, until
 * one below 255). The literals follow the literal count; then, but for the
 * last sequence, which ends the block after its literals, a 2-byte
 * little-endian offset back into the output (1 or more, within what was
 * written) and the match length's continuation; the match is copied byte
 * by byte from that offset, so it may overlap what it writes.
 */
#include "bind_fatbin_codec.h"

#include <dlfcn.h>
#include <string.h>

#include "glibc_pins.h" /* dlopen, dlsym */

cbs_codec cbs_codec_of_flags(uint64_t flags)
{
    int lz4 = (flags & CBS_FATBIN_FLAG_LZ4) != 0, zstd = (flags & CBS_FATBIN_FLAG_ZSTD) != 0;
    if (lz4 && zstd)
        return CBS_CODEC_UNKNOWN;
    return lz4 ? CBS_CODEC_LZ4 : zstd ? CBS_CODEC_ZSTD : CBS_CODEC_PLAIN;
}

uint64_t cbs_codec_max_decoded(cbs_codec codec, uint64_t n)
{
    uint64_t ratio = codec == CBS_CODEC_PLAIN  ? 1
                     : codec == CBS_CODEC_LZ4  ? 255
                     : codec == CBS_CODEC_ZSTD ? 32768
                                               : 0;
    return n > UINT64_MAX / 32768 ? UINT64_MAX : n * ratio;
}

/* A 4-bit field of 15 continued at src[*i]: each byte added to *len until
 * one below 255. 0 when the input ends first. */
static int lz4_more(const unsigned char *src, size_t n, size_t *i, size_t *len)
{
    unsigned char b;
    do {
        if (*i >= n || *len > SIZE_MAX - 255)
            return 0;
        b = src[(*i)++];
        *len += b;
    } while (b == 255);
    return 1;
}

int cbs_lz4_block_decode(const unsigned char *src, size_t n, unsigned char *dst, size_t cap)
{
    /* invariants: i <= n, o <= cap, and dst[0..o) is written */
    size_t i = 0, o = 0;
    while (i < n) {
        unsigned token = src[i++];
        size_t lit = token >> 4;
        if (lit == 15 && !lz4_more(src, n, &i, &lit))
            return 0;
        if (lit > n - i || lit > cap - o)
            return 0;
        memcpy(dst + o, src + i, lit);
        i += lit;
        o += lit;
        if (i == n)
            break; /* the last sequence: literals only */
        if (n - i < 2)
            return 0;
        size_t off = (size_t)src[i] | (size_t)src[i + 1] << 8;
        i += 2;
        if (off == 0 || off > o)
            return 0;
        size_t len = token & 15u;
        if (len == 15 && !lz4_more(src, n, &i, &len))
            return 0;
        if (len > cap - o || cap - o - len < 4)
            return 0;
        len += 4;
        for (size_t k = 0; k < len; k++, o++)
            dst[o] = dst[o - off];
    }
    return o == cap;
}

/* libzstd's one-shot decoder (its stable ABI), from libzstd.so.1 opened
 * for this call: 1 when src is frames decoding to exactly cap bytes. */
static int zstd_decode(const void *src, size_t n, void *dst, size_t cap)
{
    typedef size_t (*decompress_fn)(void *, size_t, const void *, size_t);
    typedef unsigned (*is_error_fn)(size_t);
    void *lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib)
        return 0;
    decompress_fn decompress = (decompress_fn)dlsym(lib, "ZSTD_decompress");
    is_error_fn is_error = (is_error_fn)dlsym(lib, "ZSTD_isError");
    int ok = 0;
    if (decompress && is_error) {
        /* never writes past cap: a frame that would is an error */
        size_t got = decompress(dst, cap, src, n);
        ok = !is_error(got) && got == cap;
    }
    dlclose(lib);
    return ok;
}

int cbs_codec_decode(cbs_codec codec, const void *src, size_t n, void *dst, size_t cap)
{
    if (!src || !dst || !n || !cap)
        return 0;
    switch (codec) {
    case CBS_CODEC_LZ4:
        return cbs_lz4_block_decode(src, n, dst, cap);
    case CBS_CODEC_ZSTD:
        return zstd_decode(src, n, dst, cap);
    default:
        return 0;
    }
}
