/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_nvml.c — a test double of libnvidia-ml, for CI only: the entry
 * points tests/python/test_nvml_fake.py calls, each doing what the real
 * library's contract says of its arguments (an array of the size the
 * caller gives is filled whole), so that the binding's side of that
 * contract can be checked without an NVIDIA driver. Compiled by that test.
 * Statuses are nvml.h's values: 0 success, 2 invalid argument, 3 not
 * supported.
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

/* nvml.h's nvmlFieldValue_t: its layout (the union is 8 bytes). */
typedef struct {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    int valueType;
    int nvmlReturn;
    union {
        double dVal;
        unsigned int uiVal;
        unsigned long long ullVal;
    } value;
} fake_nvml_field_value;

/* Answers each entry in place: an even fieldId succeeds with the value
 * fieldId * 10 (an unsigned int, valueType 1) and the entry's index as
 * its timestamp; an odd one is not supported (nvmlReturn 3). */
int nvmlDeviceGetFieldValues(fake_nvml_device device, int valuesCount,
                             fake_nvml_field_value *values)
{
    (void)device;
    if (valuesCount <= 0 || values == NULL)
        return 2;
    for (int i = 0; i < valuesCount; i++) {
        fake_nvml_field_value *v = &values[i];
        v->nvmlReturn = v->fieldId % 2 ? 3 : 0;
        v->valueType = 1;
        v->timestamp = i;
        v->value.uiVal = v->fieldId % 2 ? 0 : v->fieldId * 10;
    }
    return 0;
}

/* What the last nvmlDeviceClearFieldValues was given, for the test. */
static unsigned int cleared[16];
static int ncleared;

int nvmlDeviceClearFieldValues(fake_nvml_device device, int valuesCount,
                               fake_nvml_field_value *values)
{
    (void)device;
    if (valuesCount <= 0 || values == NULL)
        return 2;
    ncleared = valuesCount;
    for (int i = 0; i < valuesCount && i < 16; i++)
        cleared[i] = values[i].fieldId;
    return 0;
}

/* The test's window on the last clear: its count, its first ids. */
int fake_nvml_cleared(unsigned int *ids, int max)
{
    for (int i = 0; i < ncleared && i < max && i < 16; i++)
        ids[i] = cleared[i];
    return ncleared;
}

const char *nvmlErrorString(int result)
{
    return result == 0   ? "Success"
           : result == 2 ? "Invalid Argument"
           : result == 3 ? "Not Supported"
                         : "Unknown Error";
}
