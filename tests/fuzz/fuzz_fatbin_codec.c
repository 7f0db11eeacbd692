/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_fatbin_codec.c — libFuzzer target for the payload codecs of
 * fat-binary entries (runtime/module/bind_fatbin_codec.c): the first byte
 * chooses the codec (LZ4, this runtime's own decoder, or Zstandard through
 * libzstd.so.1), the next two the output size (0..65535 bytes), the rest
 * is the stored payload, copied into a heap block of exactly its size; the
 * output is a heap block of exactly the size asked for. Under ASan a read
 * past the payload or a write past the output is a heap-buffer-overflow.
 * Checked beyond "no crash": nothing decodes from or into nothing, no
 * decode makes more than cbs_codec_max_decoded says it can, and a
 * block the LZ4 decoder takes as exactly n bytes it refuses as n + 1 (the
 * whole output must be produced).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bind_fatbin_codec.h"

static unsigned char *block(const uint8_t *data, size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    if (!p)
        abort();
    if (n)
        memcpy(p, data, n);
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    cbs_codec codec = (data[0] & 1) ? CBS_CODEC_ZSTD : CBS_CODEC_LZ4;
    size_t cap = (size_t)data[1] | (size_t)data[2] << 8;
    data += 3, size -= 3;
    unsigned char *src = block(data, size);
    unsigned char *dst = malloc(cap ? cap : 1);
    if (!dst)
        abort();
    int ok = cbs_codec_decode(codec, src, size, dst, cap);
    if (ok && (cap == 0 || size == 0))
        abort(); /* nothing decodes from or to nothing */
    if (ok && cap > cbs_codec_max_decoded(codec, size))
        abort(); /* the bound that sizes are checked against holds */
    if (codec == CBS_CODEC_LZ4 && size) {
        unsigned char *more = malloc(cap + 1);
        if (!more)
            abort();
        if (ok && cbs_lz4_block_decode(src, size, more, cap + 1))
            abort();
        free(more);
    }
    free(dst);
    free(src);
    return 0;
}
