/* SPDX-License-Identifier: Apache-2.0 */
/* EGL/egl.h — stands in for the system header: cubind_interop.h says why. */
#include "../cubind_interop.h"
