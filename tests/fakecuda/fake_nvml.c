/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_nvml.c — a test double of libnvidia-ml, for CI only: the entry
 * points tests/python/test_nvml_fake.py calls, each doing what the real
 * library's contract says of its arguments (an array of the size the
 * caller gives is filled whole), so that the binding's side of that
 * contract can be checked without an NVIDIA driver. Compiled by that test.
 * Statuses are nvml.h's values: 0 success, 2 invalid argument.
 */
#include <stddef.h>

typedef void *fake_nvml_device;

/* Fills all `size` entries of `set`: entry i is i * 3 + 1 + scope, so the
 * test can tell that every entry came from here, in order. */
static int fill(unsigned int size, unsigned long *set, int scope)
{
    if (size == 0 || set == NULL)
        return 2;
    for (unsigned int i = 0; i < size; i++)
        set[i] = (unsigned long)i * 3u + 1u + (unsigned long)scope;
    return 0;
}

int nvmlDeviceGetMemoryAffinity(fake_nvml_device device, unsigned int nodeSetSize,
                                unsigned long *nodeSet, int scope)
{
    (void)device;
    return fill(nodeSetSize, nodeSet, scope);
}

int nvmlDeviceGetCpuAffinityWithinScope(fake_nvml_device device, unsigned int cpuSetSize,
                                        unsigned long *cpuSet, int scope)
{
    (void)device;
    return fill(cpuSetSize, cpuSet, scope);
}

int nvmlDeviceGetCpuAffinity(fake_nvml_device device, unsigned int cpuSetSize,
                             unsigned long *cpuSet)
{
    (void)device;
    return fill(cpuSetSize, cpuSet, 0);
}

const char *nvmlErrorString(int result)
{
    return result == 0 ? "Success" : result == 2 ? "Invalid Argument" : "Unknown Error";
}
