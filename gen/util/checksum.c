/* SPDX-License-Identifier: Apache-2.0 */
/* checksum.c — see checksum.h. */
#include "util/checksum.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

void checksum_hex(const char *data, size_t len, char out[CHECKSUM_HEX + 1])
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)data[i];
        h *= 0x100000001b3ULL;
    }
    snprintf(out, CHECKSUM_HEX + 1, "%016llx", (unsigned long long)h);
}

/* The header ends at the first "*" "/" line break after the tag, or, when
 * the tag's line is a "#" comment (stubs, text files), at the end of that
 * line. */
int checksum_verify(const char *data, size_t len, const char **why)
{
    const char *tag = NULL;
    size_t tlen = strlen(CHECKSUM_TAG);
    for (size_t i = 0; i + tlen <= len && i < 4096; i++)
        if (memcmp(data + i, CHECKSUM_TAG, tlen) == 0) {
            tag = data + i;
            break;
        }
    if (!tag) {
        *why = "no checksum stamp";
        return -1;
    }
    const char *stamp = tag + tlen;
    const char *end = data + len;
    const char *line = tag;
    while (line > data && line[-1] != '\n')
        line--;
    const char *close = NULL;
    if (*line == '#') {
        const char *nl = memchr(stamp, '\n', (size_t)(end - stamp));
        close = nl ? nl + 1 : NULL;
    } else {
        for (const char *p = stamp; p + 3 <= end; p++)
            if (p[0] == '*' && p[1] == '/' && p[2] == '\n') {
                close = p + 3;
                break;
            }
    }
    if (!close || end - stamp < CHECKSUM_HEX) {
        *why = "malformed generated header";
        return 0;
    }
    char sum[CHECKSUM_HEX + 1];
    checksum_hex(close, (size_t)(end - close), sum);
    if (memcmp(sum, stamp, CHECKSUM_HEX) != 0) {
        *why = "the file was edited by hand (its checksum does not match its contents)";
        return 0;
    }
    return 1;
}
