/* SPDX-License-Identifier: Apache-2.0 */
/* path.c — see path.h. */
#include "util/path.h"

#include <string.h>

const char *path_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}
