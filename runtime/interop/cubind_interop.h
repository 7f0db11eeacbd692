/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cubind_interop.h — the few OpenGL, EGL and VDPAU types that CUDA's
 * interop headers (cudaGL.h, cudaEGL.h, cudaVDPAU.h) use, declared here so
 * that the generator (libclang) and the compiler read those headers
 * without the GL/EGL/VDPAU development headers. GL/gl.h, EGL/egl.h,
 * EGL/eglext.h and vdpau/vdpau.h of this directory include it (as
 * cudaGL.h, cudaEGL.h and cudaVDPAUTypedefs.h include those); cudaVDPAU.h
 * includes nothing, so its users (the generated module) include this file
 * first.
 *
 * Invariant: each type has the size and calling convention of the real
 * one (an ABI fact, not a copy): GLenum and GLuint are unsigned 32-bit
 * integers, EGLint a signed one, the EGL handles pointers, the VDPAU
 * handles unsigned 32-bit integers, VdpGetProcAddress a function type. The
 * EGL handles are pointers to incomplete structs (the real ones are void
 * pointers, the same ABI) so that the generator binds them as handle
 * classes, as cuda.bindings does.
 */
#ifndef CUBIND_INTEROP_H
#define CUBIND_INTEROP_H

#include <stdint.h>

typedef unsigned int GLenum;
typedef unsigned int GLuint;

typedef int32_t EGLint;
typedef struct cubind_EGLImageKHR_st *EGLImageKHR;
typedef struct cubind_EGLStreamKHR_st *EGLStreamKHR;
typedef struct cubind_EGLSyncKHR_st *EGLSyncKHR;

typedef uint32_t VdpDevice;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;
typedef uint32_t VdpFuncId;
typedef int VdpStatus;
typedef VdpStatus VdpGetProcAddress(VdpDevice device, VdpFuncId function_id,
                                    void **function_pointer);

#endif
