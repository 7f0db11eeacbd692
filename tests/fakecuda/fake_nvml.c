/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_nvml.c — a test double of libnvidia-ml, for CI only: the entry
 * points tests/python/test_nvml_fake.py and test_nvml_struct_fields.py
 * call, so that the binding's side of the library's contract is checked
 * without an NVIDIA driver. Compiled by those tests. Statuses are
 * nvml.h's values: 0 success, 2 invalid argument, 3 not supported, 25
 * argument version mismatch.
 *
 * Arrays (test_nvml_fake.py): an array of the size the caller gives is
 * filled whole, as the real library's contract says; field values are
 * answered (or recorded, when cleared) in place.
 *
 * Structs (test_nvml_struct_fields.py): each call records what reached it
 * (the struct's version and fields) in fake_nvml_seen, which the test
 * reads through ctypes, so that the values cubind.nvml builds from a
 * function's parameters (input-fields) are checked. The layouts are
 * nvml.h's (CUDA 12.4 and 13.0 agree on these).
 */
#include <stddef.h>
#include <string.h>

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

/* The supported P-states: refuses a buffer under its 16 entries (7,
 * insufficient size), else writes P0, P2 and P8 and marks the rest
 * unknown (32); the size it was given is kept for the test. */
static unsigned int pstates_size;

int nvmlDeviceGetSupportedPerformanceStates(fake_nvml_device device, int *pstates,
                                            unsigned int size)
{
    (void)device;
    pstates_size = size;
    if (size < 16 * sizeof *pstates)
        return 7;
    static const int supported[] = {0, 2, 8};
    for (unsigned int i = 0; i < 16; i++)
        pstates[i] = i < 3 ? supported[i] : 32;
    return 0;
}

unsigned int fake_nvml_pstates_size(void)
{
    return pstates_size;
}

const char *nvmlErrorString(int result)
{
    return result == 0   ? "Success"
           : result == 2 ? "Invalid Argument"
           : result == 3 ? "Not Supported"
                         : "Unknown Error";
}

#define FAKE_OK 0
#define FAKE_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define FAKE_VERSION(s, n) ((unsigned int)(sizeof(s) | (n) << 24))

typedef struct {
    unsigned int version;
    unsigned char powerScope;
    unsigned int powerValueMw;
} fake_power_value_v2;

typedef struct {
    unsigned int version;
    unsigned int mode;
} fake_heterogeneous_mode_v1;

typedef struct {
    unsigned int version;
    unsigned long long maxAttackerAdvantage;
} fake_key_rotation_threshold_v1;

typedef struct {
    unsigned int isCecAttestationReportPresent;
    unsigned int attestationReportSize;
    unsigned int cecAttestationReportSize;
    unsigned char nonce[0x20];
    unsigned char attestationReport[0x2000];
    unsigned char cecAttestationReport[0x1000];
} fake_attestation_report;

/* What the last call received: its version field, then its fields. */
unsigned long long fake_nvml_seen[4];

static unsigned int mode_now = 7;

int nvmlDeviceSetPowerManagementLimit_v2(void *device, fake_power_value_v2 *v)
{
    (void)device;
    fake_nvml_seen[0] = v->version;
    fake_nvml_seen[1] = v->powerScope;
    fake_nvml_seen[2] = v->powerValueMw;
    return v->version == FAKE_VERSION(*v, 2) ? FAKE_OK : FAKE_ERROR_ARGUMENT_VERSION_MISMATCH;
}

int nvmlDeviceSetVgpuHeterogeneousMode(void *device, const fake_heterogeneous_mode_v1 *m)
{
    (void)device;
    fake_nvml_seen[0] = m->version;
    fake_nvml_seen[1] = m->mode;
    if (m->version != FAKE_VERSION(*m, 1))
        return FAKE_ERROR_ARGUMENT_VERSION_MISMATCH;
    mode_now = m->mode;
    return FAKE_OK;
}

int nvmlDeviceGetVgpuHeterogeneousMode(void *device, fake_heterogeneous_mode_v1 *m)
{
    (void)device;
    fake_nvml_seen[0] = m->version;
    if (m->version != FAKE_VERSION(*m, 1))
        return FAKE_ERROR_ARGUMENT_VERSION_MISMATCH;
    m->mode = mode_now;
    return FAKE_OK;
}

int nvmlSystemSetConfComputeKeyRotationThresholdInfo(fake_key_rotation_threshold_v1 *t)
{
    fake_nvml_seen[0] = t->version;
    fake_nvml_seen[1] = t->maxAttackerAdvantage;
    return t->version == FAKE_VERSION(*t, 1) ? FAKE_OK : FAKE_ERROR_ARGUMENT_VERSION_MISMATCH;
}

/* The report echoes the nonce it was given. */
int nvmlDeviceGetConfComputeGpuAttestationReport(void *device, fake_attestation_report *r)
{
    (void)device;
    memcpy(r->attestationReport, r->nonce, sizeof r->nonce);
    r->attestationReportSize = sizeof r->nonce;
    fake_nvml_seen[0] = 0;
    return FAKE_OK;
}
