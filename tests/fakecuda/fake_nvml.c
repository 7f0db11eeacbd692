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
 * Arrays the library fills and sizes (test_nvml_fake.py): the functions
 * whose output struct carries a pointer to an array and its count answer
 * as NVML does: a count below the entries there are sets the count to
 * that number and returns insufficient size (7); else the first entries
 * are written, recognizable values, and the count says how many. The test
 * sets how many entries there are, how the number grows after each
 * insufficient-size answer (the count growing between the two calls) and
 * a status to fail a call with; a log says what each call was given.
 *
 * Structs (test_nvml_struct_fields.py): each call records what reached it
 * (the struct's version and fields) in fake_nvml_seen, which the test
 * reads through ctypes, so that the values cubind.nvml builds from a
 * function's parameters (input-fields) are checked. The layouts are
 * nvml.h's (CUDA 12.4 and 13.0 agree on these).
 */
#include <stddef.h>
#include <stdio.h>
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
           : result == 7 ? "Insufficient Size"
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

/* nvmlNvLinkPowerThres_t: one field, no version. cuda.bindings.nvml
 * (cuda-python's nvml.pyx at 002ce1a) builds this struct without assigning its threshold (the library
 * gets whatever the stack held); the test checks that cubind's reaches it. */
typedef struct {
    unsigned int lowPwrThreshold;
} fake_nvlink_power_thres;

int nvmlDeviceSetNvLinkDeviceLowPowerThreshold(void *device, fake_nvlink_power_thres *info)
{
    (void)device;
    fake_nvml_seen[0] = info->lowPwrThreshold;
    return FAKE_OK;
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

/* ---- arrays the library fills and sizes ---------------------------------- */

#define FAKE_ERROR_INVALID_ARGUMENT 2
#define FAKE_ERROR_INSUFFICIENT_SIZE 7
#define FAKE_LOG 16

/* How many entries there are, how many more after each insufficient-size
 * answer (while grow_times lasts), the call that fails (1 the first after
 * fake_nvml_entries, 0 none) and its status. */
static unsigned int entries, grow_by, grow_times;
static unsigned int fail_at, fail_status;
/* What each call since fake_nvml_entries was given: the count, whether
 * the array pointer was NULL. */
static unsigned int log_count[FAKE_LOG];
static int log_null[FAKE_LOG];
static unsigned int ncalls;

void fake_nvml_entries(unsigned int n, unsigned int grow, unsigned int times, unsigned int fail,
                       unsigned int status)
{
    entries = n;
    grow_by = grow;
    grow_times = times;
    fail_at = fail;
    fail_status = status;
    ncalls = 0;
}

/* The calls since fake_nvml_entries (their number) and, for the first
 * `max`, the count each was given and whether its array was NULL. */
unsigned int fake_nvml_fill_log(unsigned int *counts, int *nulls, unsigned int max)
{
    for (unsigned int i = 0; i < ncalls && i < max && i < FAKE_LOG; i++) {
        counts[i] = log_count[i];
        nulls[i] = log_null[i];
    }
    return ncalls;
}

/* One call's answer for an array of *count entries at `array` in a struct
 * whose version field holds `version` (`want` expected): 0 when the
 * caller is to write *count entries (the number there are), else the
 * status, *count set to the number needed. */
static int sized_answer(unsigned int version, unsigned int want, unsigned int *count,
                        const void *array)
{
    if (version != want)
        return FAKE_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (ncalls < FAKE_LOG) {
        log_count[ncalls] = *count;
        log_null[ncalls] = array == NULL;
    }
    ncalls++;
    if (ncalls == fail_at)
        return (int)fail_status;
    if (*count < entries) {
        *count = entries;
        if (grow_times) {
            entries += grow_by;
            grow_times--;
        }
        return FAKE_ERROR_INSUFFICIENT_SIZE;
    }
    if (entries && !array)
        return FAKE_ERROR_INVALID_ARGUMENT;
    *count = entries;
    return FAKE_OK;
}

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
    unsigned long long usedGpuCcProtectedMemory;
} fake_process_detail_v1;

typedef struct {
    unsigned int version;
    unsigned int mode;
    unsigned int numProcArrayEntries;
    fake_process_detail_v1 *procArray;
} fake_process_detail_list_v1;

/* Entry i: pid 1000 + i, the mode given as its GPU instance, (i + 1) MiB. */
int nvmlDeviceGetRunningProcessDetailList(void *device, fake_process_detail_list_v1 *l)
{
    (void)device;
    int rc = sized_answer(l->version, FAKE_VERSION(*l, 1), &l->numProcArrayEntries, l->procArray);
    for (unsigned int i = 0; rc == FAKE_OK && i < l->numProcArrayEntries; i++) {
        fake_process_detail_v1 *e = &l->procArray[i];
        e->pid = 1000 + i;
        e->usedGpuMemory = (i + 1ull) << 20;
        e->gpuInstanceId = l->mode;
        e->computeInstanceId = i;
        e->usedGpuCcProtectedMemory = 0;
    }
    return rc;
}

typedef struct {
    unsigned long long timeStamp;
    unsigned int pid, smUtil, memUtil, encUtil, decUtil, jpgUtil, ofaUtil;
} fake_process_utilization_v1;

typedef struct {
    unsigned int version;
    unsigned int processSamplesCount;
    unsigned long long lastSeenTimeStamp;
    fake_process_utilization_v1 *procUtilArray;
} fake_processes_utilization_v1;

/* Entry i: timestamp lastSeenTimeStamp + i + 1, pid 2000 + i, SM i * 10. */
int nvmlDeviceGetProcessesUtilizationInfo(void *device, fake_processes_utilization_v1 *u)
{
    (void)device;
    int rc = sized_answer(u->version, FAKE_VERSION(*u, 1), &u->processSamplesCount, u->procUtilArray);
    for (unsigned int i = 0; rc == FAKE_OK && i < u->processSamplesCount; i++) {
        fake_process_utilization_v1 *e = &u->procUtilArray[i];
        e->timeStamp = u->lastSeenTimeStamp + i + 1;
        e->pid = 2000 + i;
        e->smUtil = i * 10;
    }
    return rc;
}

typedef union {
    double d;
    unsigned long long ull;
} fake_value;

typedef struct {
    unsigned long long timeStamp;
    unsigned int vgpuInstance;
    fake_value smUtil, memUtil, encUtil, decUtil, jpgUtil, ofaUtil;
} fake_vgpu_instance_utilization_v1;

typedef struct {
    unsigned int version;
    int sampleValType;
    unsigned int vgpuInstanceCount;
    unsigned long long lastSeenTimeStamp;
    fake_vgpu_instance_utilization_v1 *vgpuUtilArray;
} fake_vgpu_instances_utilization_v1;

/* Entry i: vGPU instance 3000 + i, its SM value i + 0.5 (the sample type
 * 0, double). */
int nvmlDeviceGetVgpuInstancesUtilizationInfo(void *device, fake_vgpu_instances_utilization_v1 *u)
{
    (void)device;
    int rc = sized_answer(u->version, FAKE_VERSION(*u, 1), &u->vgpuInstanceCount, u->vgpuUtilArray);
    u->sampleValType = 0;
    for (unsigned int i = 0; rc == FAKE_OK && i < u->vgpuInstanceCount; i++) {
        fake_vgpu_instance_utilization_v1 *e = &u->vgpuUtilArray[i];
        e->timeStamp = u->lastSeenTimeStamp + i + 1;
        e->vgpuInstance = 3000 + i;
        e->smUtil.d = i + 0.5;
    }
    return rc;
}

typedef struct {
    char processName[64];
    unsigned long long timeStamp;
    unsigned int vgpuInstance, pid, smUtil, memUtil, encUtil, decUtil, jpgUtil, ofaUtil;
} fake_vgpu_process_utilization_v1;

typedef struct {
    unsigned int version;
    unsigned int vgpuProcessCount;
    unsigned long long lastSeenTimeStamp;
    fake_vgpu_process_utilization_v1 *vgpuProcUtilArray;
} fake_vgpu_processes_utilization_v1;

/* Entry i: process "vm-proc-<i>", pid 4000 + i, timestamp lastSeenTimeStamp
 * + i + 1. */
int nvmlDeviceGetVgpuProcessesUtilizationInfo(void *device, fake_vgpu_processes_utilization_v1 *u)
{
    (void)device;
    int rc = sized_answer(u->version, FAKE_VERSION(*u, 1), &u->vgpuProcessCount, u->vgpuProcUtilArray);
    for (unsigned int i = 0; rc == FAKE_OK && i < u->vgpuProcessCount; i++) {
        fake_vgpu_process_utilization_v1 *e = &u->vgpuProcUtilArray[i];
        snprintf(e->processName, sizeof e->processName, "vm-proc-%u", i);
        e->timeStamp = u->lastSeenTimeStamp + i + 1;
        e->pid = 4000 + i;
    }
    return rc;
}

typedef struct {
    unsigned int version;
    unsigned int placementSize;
    unsigned int count;
    unsigned int *placementIds;
} fake_vgpu_placement_list_v1;

/* Id i: the vGPU type * 100 + 2 * i (supported) or + 2 * i + 1 (creatable);
 * the placement size is the type's. */
static int placements(unsigned int type, fake_vgpu_placement_list_v1 *l, unsigned int odd)
{
    int rc = sized_answer(l->version, FAKE_VERSION(*l, 1), &l->count, l->placementIds);
    l->placementSize = type;
    for (unsigned int i = 0; rc == FAKE_OK && i < l->count; i++)
        l->placementIds[i] = type * 100 + 2 * i + odd;
    return rc;
}

int nvmlDeviceGetVgpuTypeSupportedPlacements(void *device, unsigned int type,
                                             fake_vgpu_placement_list_v1 *l)
{
    (void)device;
    return placements(type, l, 0);
}

int nvmlDeviceGetVgpuTypeCreatablePlacements(void *device, unsigned int type,
                                             fake_vgpu_placement_list_v1 *l)
{
    (void)device;
    return placements(type, l, 1);
}
