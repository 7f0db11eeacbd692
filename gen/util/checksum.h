/* SPDX-License-Identifier: Apache-2.0 */
/*
 * checksum.h — the checksum stamped into generated files (like Argument
 * Clinic's), so a hand edit of out/ is caught: FNV-1a, 64 bits, of the file
 * body after the generated header comment, as 16 lowercase hex digits.
 */
#ifndef CUBIND_CHECKSUM_H
#define CUBIND_CHECKSUM_H

#include <stddef.h>

#define CHECKSUM_HEX 16
#define CHECKSUM_TAG "cubind-checksum: "

void checksum_hex(const char *data, size_t len, char out[CHECKSUM_HEX + 1]);

/* Verifies a generated file's stamp against its body. Returns 1 when it
 * matches, 0 when it does not (with why), -1 when there is no stamp. */
int checksum_verify(const char *data, size_t len, const char **why);

#endif
