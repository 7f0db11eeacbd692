/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bind_fatbin_codec.h — the payload codecs of fat-binary entries, so that
 * the PTX nvcc compresses by default can be read for kernel types
 * (bind_kernel_types.c). No Python here.
 *
 * An entry's flags say how its payload is stored (facts about the format,
 * docs/kernel-arguments.md): 0x2000 an LZ4 block (raw, no frame:
 * `-compress-mode=speed`), 0x8000 a Zstandard frame (nvcc 13's default,
 * `size`, `balance`), neither: as it is. The LZ4 decoder is this file's
 * own; Zstandard is libzstd.so.1, opened at run time (RTLD_NODELETE: once
 * loaded it stays, and no handle is kept here) and, when the system has
 * none, the entry is left unread.
 */
#ifndef CUBIND_BIND_FATBIN_CODEC_H
#define CUBIND_BIND_FATBIN_CODEC_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    CBS_CODEC_PLAIN = 0, /* stored as it is */
    CBS_CODEC_LZ4,       /* an LZ4 block */
    CBS_CODEC_ZSTD,      /* a Zstandard frame */
    CBS_CODEC_UNKNOWN    /* flags this reader does not know (both bits) */
} cbs_codec;

#define CBS_FATBIN_FLAG_LZ4 0x2000u
#define CBS_FATBIN_FLAG_ZSTD 0x8000u

/* The codec an entry's flags (the 8 bytes at 40 of its header) name. */
cbs_codec cbs_codec_of_flags(uint64_t flags);

/* The most bytes n stored bytes of `codec` can decode to (n for PLAIN, 0
 * for UNKNOWN): an LZ4 block gives at most 255 bytes per byte (a match
 * length's continuation byte), a Zstandard frame at most 32768 (a block of
 * 128 KiB, the format's largest, from a 3-byte header and one byte
 * repeated). A declared size above it is not allocated for. */
uint64_t cbs_codec_max_decoded(cbs_codec codec, uint64_t n);

/* Decodes the n bytes at src as one LZ4 block into dst, which must come
 * out exactly `cap` bytes long: 1 when it did, else 0 (malformed, shorter
 * or longer). Reads no byte outside src[0..n), writes none outside
 * dst[0..cap); a match may refer only to bytes already written. */
int cbs_lz4_block_decode(const unsigned char *src, size_t n, unsigned char *dst, size_t cap);

/* Decodes src[0..n) stored as `codec` into dst[0..cap), which it must fill
 * exactly: 1, or 0 (malformed, a size other than cap, CBS_CODEC_PLAIN or
 * UNKNOWN, libzstd.so.1 missing). The same bounds as the LZ4 decoder. */
int cbs_codec_decode(cbs_codec codec, const void *src, size_t n, void *dst, size_t cap);

#endif
