/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/cpu_pairs.c — which of this process's CPUs share a physical core,
 * measured rather than read from sysfs.
 *
 * Why: a virtual machine may report every vCPU as a core of its own
 * (lscpu: "Thread(s) per core: 1") while its host runs two vCPUs on the two
 * hyperthreads of one core. Eight threads pinned to eight such vCPUs then
 * run on four cores, and nothing scales past about 5x one thread, C and
 * CPython's own loops included. ft_threads.py's --cpus reads the topology
 * sysfs gives; this probe measures it: a pure arithmetic loop (no memory
 * traffic, no system calls) on CPU a alone, then on a and b at once. Two
 * CPUs whose loops slow each other below THRESHOLD of their lone rate share
 * a core. Each pair is measured twice and keeps its better share, since a
 * neighbour on the host can slow one measurement but sharing a core slows
 * both.
 *
 * Usage: cpu_pairs [--ms MS] [--threshold F]   (defaults 20 and 0.8)
 *        cpu_pairs --from FILE [--threshold F]
 *        cpu_pairs --scale LIST|any [--rounds R] [--ms MS]
 * The first form's output, one JSON object a line:
 *   {"cpu": C, "solo_mloops_per_s": R}                       per CPU
 *   {"pair": [A, B], "share": S}                             per pair, S the
 *       lower of the two threads' rates together over alone, best of 2
 *   {"groups": [[...], ...], "threshold": F}                 CPUs sharing a core
 * then, on the last line alone, the CPUs in the order to pin threads to:
 * one CPU of every group first (each group's lowest), then each group's
 * second, and so on, so N threads never share a core while N groups are
 * free. --from FILE groups and orders the "cpu" and "pair" lines of an
 * earlier run's output again (another threshold, or a logged run).
 *
 * The second form is the machine's own floor for ft_threads.py's table:
 * the same loop on 1, 2, 4 and 8 threads at once (thread i pinned to the
 * i-th CPU of LIST, or left to the scheduler with "any"), R rounds, as
 * c_bench's threads lines: {"impl": "c", "case": "threads_spin_no_driver",
 * "threads": T, "mcalls_per_s": best, "rounds": [...], "cpu_shares": [...],
 * "steal_shares": [...]} (the steal: the time the hypervisor took from
 * the machine's CPUs, over the threads' wall time),
 * a "call" being one pass of the loop (four multiply-adds). With no memory
 * traffic, no lock and no system call, it scales as far as the CPUs do.
 *
 * Invariant: every CPU the process may use appears in exactly one group and
 * exactly once in the order.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { CP_MAX_CPUS = 256, CP_MAX_THREADS = 8, CP_MAX_ROUNDS = 64, CP_CHECK_EVERY = 1 << 14 };
#define CP_MUL UINT64_C(6364136223846793005) /* a 64-bit LCG's constants */
#define CP_ADD UINT64_C(1442695040888963407)

/* One spinning thread: pinned to `cpu` (or left where the scheduler puts
 * it when cpu < 0), waits at `start`, runs its loop for `seconds` or, when
 * `blocks` is nonzero, for that many blocks of CP_CHECK_EVERY passes;
 * leaves its rate, its loop's start and end, and its CPU time over its
 * wall time. */
struct cp_spinner {
    int cpu;
    double seconds;
    uint64_t blocks;
    pthread_barrier_t *start;
    double mloops_per_s;
    double t_start, t_end;
    double cpu_share;
    uint64_t sink; /* the loop's result, so the loop cannot be dropped */
};

static double cp_clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *cp_spin(void *arg)
{
    struct cp_spinner *s = arg;
    if (s->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(s->cpu, &set);
        if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
            fprintf(stderr, "cpu_pairs: cannot pin a thread to CPU %d\n", s->cpu);
            exit(1);
        }
    }
    pthread_barrier_wait(s->start);
    /* Four independent multiply chains, in registers: more than the
     * multiplier's latency in cycles, so the loop is bound by the core's
     * multiplier throughput, not by one chain's latency, and a thread on
     * the other hyperthread of the same core takes about half of it. */
    uint64_t a = (uint64_t)s->cpu + 2, b = a + 1, c = a + 2, d = a + 3, loops = 0;
    double c0 = cp_clock_s(CLOCK_THREAD_CPUTIME_ID), t0 = cp_clock_s(CLOCK_MONOTONIC), t;
    uint64_t blocks = 0;
    do {
        for (int i = 0; i < CP_CHECK_EVERY; i++) {
            a = a * CP_MUL + CP_ADD;
            b = b * CP_MUL + CP_ADD;
            c = c * CP_MUL + CP_ADD;
            d = d * CP_MUL + CP_ADD;
        }
        loops += CP_CHECK_EVERY;
        t = cp_clock_s(CLOCK_MONOTONIC);
    } while (s->blocks ? ++blocks < s->blocks : t - t0 < s->seconds);
    s->t_start = t0;
    s->t_end = t;
    s->cpu_share = (cp_clock_s(CLOCK_THREAD_CPUTIME_ID) - c0) / (t - t0);
    s->sink = a ^ b ^ c ^ d;
    s->mloops_per_s = (double)loops / (t - t0) / 1e6;
    return NULL;
}

/* Runs n spinners at once, thread i on cpus[i] (unpinned when cpus is
 * NULL), each for `seconds` or, when `blocks` is nonzero, that many blocks;
 * rates[i] and shares[i] get thread i's. Returns the span from the first
 * thread's start to the last one's end. */
static double cp_run(const int *cpus, int n, double seconds, uint64_t blocks, double *rates,
                     double *shares)
{
    double first = 0, last = 0;
    pthread_t tid[CP_MAX_THREADS];
    struct cp_spinner sp[CP_MAX_THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int i = 0; i < n; i++) {
        sp[i] = (struct cp_spinner){cpus ? cpus[i] : -1, seconds, blocks, &start, 0, 0, 0, 0, 0};
        if (pthread_create(&tid[i], NULL, cp_spin, &sp[i]) != 0) {
            fprintf(stderr, "cpu_pairs: cannot start a thread\n");
            exit(1);
        }
    }
    for (int i = 0; i < n; i++) {
        pthread_join(tid[i], NULL);
        rates[i] = sp[i].mloops_per_s;
        shares[i] = sp[i].cpu_share;
        if (i == 0 || sp[i].t_start < first)
            first = sp[i].t_start;
        if (i == 0 || sp[i].t_end > last)
            last = sp[i].t_end;
    }
    pthread_barrier_destroy(&start);
    return last - first;
}

/* /proc/stat's "steal" over all CPUs, in seconds: the time the hypervisor
 * kept this machine's CPUs from running while they had work; 0 where the
 * kernel does not count it. */
static double cp_steal_s(void)
{
    unsigned long long steal = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return 0;
    if (fscanf(f, "cpu %*u %*u %*u %*u %*u %*u %*u %llu", &steal) != 1)
        steal = 0;
    fclose(f);
    return (double)steal / (double)sysconf(_SC_CLK_TCK);
}

/* --scale: 1, 2, 4 and 8 spinners, `rounds` times each, thread i on
 * cpus[i] (cpus NULL: unpinned); one c_bench-style line per thread count.
 * As in c_bench, every thread does the same work (the blocks one thread
 * does in `seconds`, measured first) and a round's rate is all threads'
 * passes over the span from the first start to the last end, so threads
 * that take turns on fewer CPUs than threads do not count as parallel. */
static void cp_scale(const int *cpus, int ncpus, int rounds, double seconds)
{
    static const int counts[] = {1, 2, 4, 8};
    double rates[CP_MAX_THREADS], shares[CP_MAX_THREADS];
    cp_run(cpus, 1, seconds, 0, rates, shares);
    uint64_t blocks = (uint64_t)(rates[0] * 1e6 * seconds / CP_CHECK_EVERY) + 1;
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int t = counts[k];
        double total[CP_MAX_ROUNDS], share[CP_MAX_ROUNDS], steal[CP_MAX_ROUNDS];
        double best = 0, best_share = 0;
        if (cpus && t > ncpus)
            break; /* fewer CPUs than threads: pinned rows stop here */
        for (int r = 0; r < rounds; r++) {
            double stolen = cp_steal_s();
            double span = cp_run(cpus, t, seconds, blocks, rates, shares);
            steal[r] = (cp_steal_s() - stolen) / (span * t);
            total[r] = (double)t * (double)blocks * CP_CHECK_EVERY / span / 1e6;
            share[r] = 0;
            for (int i = 0; i < t; i++)
                share[r] += shares[i] / t;
            if (total[r] > best) {
                best = total[r];
                best_share = share[r];
            }
        }
        printf("{\"impl\": \"c\", \"case\": \"threads_spin_no_driver\", \"status\": \"ok\", "
               "\"threads\": %d, \"mcalls_per_s\": %.3f, \"cpu_share\": %.3f", t, best, best_share);
        static const char *const names[] = {"rounds", "cpu_shares", "steal_shares"};
        const double *values[] = {total, share, steal};
        for (int pass = 0; pass < 3; pass++) {
            printf(", \"%s\": [", names[pass]);
            for (int r = 0; r < rounds; r++)
                printf("%s%.3f", r ? ", " : "", values[pass][r]);
            printf("]");
        }
        printf("}\n");
    }
}

/* Union-find over indexes into the CPU list: root[i] == i for a group's
 * representative, which is always the group's lowest index. */
static int cp_root(int *root, int i)
{
    while (root[i] != i)
        i = root[i] = root[root[i]];
    return i;
}

static void cp_join(int *root, int a, int b)
{
    a = cp_root(root, a);
    b = cp_root(root, b);
    if (a != b)
        root[a < b ? b : a] = a < b ? a : b;
}

/* One pair's measurement: the lower of its two threads' rates together
 * over alone, the better of two tries. */
struct cp_pair {
    int a, b; /* indexes into the CPU list, a < b */
    double share;
};

static struct cp_pair cp_pairs_seen[CP_MAX_CPUS * (CP_MAX_CPUS - 1) / 2];

/* The probe: every CPU alone, then every pair at once; prints a line for
 * each and fills cp_pairs_seen. Returns how many pairs. */
static int cp_measure(const int *cpus, int n, double seconds)
{
    double solo[CP_MAX_CPUS];
    int np = 0;
    for (int i = 0; i < n; i++) {
        double ignored;
        cp_run(&cpus[i], 1, seconds, 0, &solo[i], &ignored);
        printf("{\"cpu\": %d, \"solo_mloops_per_s\": %.1f}\n", cpus[i], solo[i]);
    }
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            int pair[2] = {cpus[a], cpus[b]};
            double share = 0;
            for (int rep = 0; rep < 2; rep++) {
                double r[2], ignored[2];
                cp_run(pair, 2, seconds, 0, r, ignored);
                double sa = r[0] / solo[a], sb = r[1] / solo[b];
                double s = sa < sb ? sa : sb;
                if (s > share)
                    share = s;
            }
            printf("{\"pair\": [%d, %d], \"share\": %.3f}\n", cpus[a], cpus[b], share);
            cp_pairs_seen[np++] = (struct cp_pair){a, b, share};
        }
    return np;
}

/* --from FILE: the "cpu" and "pair" lines of an earlier probe's output
 * (other lines are skipped), into cpus[0..*n) and cp_pairs_seen. Returns how
 * many pairs, or -1 when a line names a CPU twice or a pair names a CPU no
 * "cpu" line gave. */
static int cp_read(FILE *f, int *cpus, int *n)
{
    static int index_of[CPU_SETSIZE]; /* CPU number -> index + 1; 0: none */
    char line[256];
    int np = 0, a, b;
    double share;
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "{\"cpu\": %d", &a) == 1) {
            if (a < 0 || a >= CPU_SETSIZE || index_of[a] || *n == CP_MAX_CPUS)
                return -1;
            cpus[*n] = a;
            index_of[a] = ++*n;
        } else if (sscanf(line, "{\"pair\": [%d, %d], \"share\": %lf", &a, &b, &share) == 3) {
            if (a < 0 || a >= CPU_SETSIZE || b < 0 || b >= CPU_SETSIZE || !index_of[a] || !index_of[b]
                || a == b || np == (int)(sizeof cp_pairs_seen / sizeof cp_pairs_seen[0]))
                return -1;
            cp_pairs_seen[np++] = (struct cp_pair){index_of[a] - 1, index_of[b] - 1, share};
        }
    }
    return np;
}

/* Prints the groups of CPUs that share a core (pairs below `threshold`,
 * joined transitively) and, last, the order to pin threads in. */
static void cp_group(const int *cpus, int n, int np, double threshold)
{
    int root[CP_MAX_CPUS];
    for (int i = 0; i < n; i++)
        root[i] = i;
    for (int k = 0; k < np; k++)
        if (cp_pairs_seen[k].share < threshold)
            cp_join(root, cp_pairs_seen[k].a, cp_pairs_seen[k].b);

    /* Groups in the order of their lowest CPU; each group's members in CPU
     * order. rank[i]: i's position within its group. */
    int rank[CP_MAX_CPUS], size[CP_MAX_CPUS] = {0}, most = 0;
    for (int i = 0; i < n; i++) {
        int r = cp_root(root, i);
        rank[i] = size[r]++;
        if (size[r] > most)
            most = size[r];
    }
    printf("{\"groups\": [");
    for (int g = 0, first = 1; g < n; g++) {
        if (cp_root(root, g) != g)
            continue;
        printf("%s[", first ? "" : ", ");
        first = 0;
        for (int i = g, sep = 0; i < n; i++)
            if (cp_root(root, i) == g) {
                printf("%s%d", sep ? ", " : "", cpus[i]);
                sep = 1;
            }
        printf("]");
    }
    printf("], \"threshold\": %.2f}\n", threshold);
    for (int k = 0, sep = 0; k < most; k++)
        for (int i = 0; i < n; i++)
            if (rank[i] == k) {
                printf("%s%d", sep ? "," : "", cpus[i]);
                sep = 1;
            }
    printf("\n");
}

/* A comma-separated list of CPU numbers (main takes "any" apart); returns
 * how many went into out, or -1 for a malformed list. */
static int cp_parse_list(const char *v, int *out)
{
    int n = 0;
    for (const char *q = v; *q;) {
        char *end = NULL;
        long c = strtol(q, &end, 10);
        if (end == q || c < 0 || c >= CPU_SETSIZE || n == CP_MAX_CPUS || (*end && *end != ','))
            return -1;
        out[n++] = (int)c;
        q = *end ? end + 1 : end;
    }
    return n;
}

static int cp_usage(void)
{
    fprintf(stderr, "usage: cpu_pairs [--ms MS] [--threshold F]\n"
                    "       cpu_pairs --from FILE [--threshold F]\n"
                    "       cpu_pairs --scale LIST|any [--rounds R] [--ms MS]\n");
    return 2;
}

int main(int argc, char **argv)
{
    double ms = 20, threshold = 0.8, rounds = 5;
    const char *scale = NULL, *from = NULL;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        double *knob = !strcmp(argv[i], "--ms")          ? &ms
                       : !strcmp(argv[i], "--threshold") ? &threshold
                       : !strcmp(argv[i], "--rounds")    ? &rounds
                                                         : NULL;
        if (i + 1 == argc)
            return cp_usage();
        if (!strcmp(argv[i], "--scale"))
            scale = argv[++i];
        else if (!strcmp(argv[i], "--from"))
            from = argv[++i];
        else if (!knob || (*knob = strtod(argv[++i], &end), *end) || *knob <= 0)
            return cp_usage();
    }
    if (rounds != (int)rounds || rounds > CP_MAX_ROUNDS)
        return cp_usage();
    int cpus[CP_MAX_CPUS], n = 0;
    if (scale && strcmp(scale, "any")) {
        if ((n = cp_parse_list(scale, cpus)) <= 0)
            return cp_usage();
        cp_scale(cpus, n, (int)rounds, ms / 1e3);
        return 0;
    }
    if (scale) {
        cp_scale(NULL, 0, (int)rounds, ms / 1e3);
        return 0;
    }
    if (from) {
        FILE *f = fopen(from, "r");
        int np = f ? cp_read(f, cpus, &n) : -1;
        if (f)
            fclose(f);
        if (np < 0) {
            fprintf(stderr, "cpu_pairs: %s: not a cpu_pairs output\n", from);
            return 1;
        }
        cp_group(cpus, n, np, threshold);
        return 0;
    }
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        perror("cpu_pairs: sched_getaffinity");
        return 1;
    }
    for (int c = 0; c < CP_MAX_CPUS && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed))
            cpus[n++] = c;
    cp_group(cpus, n, cp_measure(cpus, n, ms / 1e3), threshold);
    return 0;
}
