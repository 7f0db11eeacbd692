/* SPDX-License-Identifier: Apache-2.0 */
/*
 * path.h — file-name helpers the stages share.
 */
#ifndef CUBIND_PATH_H
#define CUBIND_PATH_H

/* The last component of `path` ("cuda.h" of ".../include/cuda.h"): a
 * pointer into `path`, and lives as long as it. */
const char *path_base(const char *path);

#endif
