/* The code of benchmarks/bench_executable_overhead.py's C rows: a release computed from the data each time —
 * "mean" (a replace-DP mean of the records clipped to [-15, 15]^d) or "kmeans" (k = 3 centres drawn in the box,
 * five Lloyd steps on noisy sums and counts: a DP k-means) —, served through dpaudit's protocol for programs
 * (docs/executables.md), or, with --own N, timed in its own loop: one request read, N releases computed for the
 * seeds 1..N (after a tenth as many untimed), nothing written but the microseconds per release (wall, CPU).
 *
 *   cc -O2 -o overhead benchmarks/executables/overhead.c -lm
 *   ./overhead mean | ./overhead kmeans                  (the protocol)
 *   ./overhead mean --own 20000 < request.json           (its own loop)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LO (-15.0)
#define HI 15.0
#define K 3
#define STEPS 5

static uint64_t state;

static double uniform(void) { /* splitmix64, in (0, 1) */
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (((z ^ (z >> 31)) >> 11) + 0.5) * 0x1.0p-53;
}

static double laplace(double scale) { return scale * log(uniform() / uniform()); }

static double clip(double x) { return fmin(fmax(x, LO), HI); }

/* One release for the seed into out (d values for the mean, K*d for k-means); how many values it wrote. */
static long release(int kmeans, const double *X, long n, long d, double eps, uint64_t seed, double *out) {
    state = seed;
    double records = n > 0 ? n : 1;
    if (!kmeans) {
        for (long j = 0; j < d; j++) out[j] = 0;
        for (long i = 0; i < n; i++)
            for (long j = 0; j < d; j++) out[j] += clip(X[i * d + j]) / records;
        for (long j = 0; j < d; j++) out[j] += laplace(d * (HI - LO) / (records * eps));
        return d;
    }
    double sums[K * 64], counts[K], scale = STEPS * (d * HI + 1) / eps;
    for (long c = 0; c < K * d; c++) out[c] = LO + (HI - LO) * uniform();
    for (int step = 0; step < STEPS; step++) {
        memset(sums, 0, sizeof sums);
        memset(counts, 0, sizeof counts);
        for (long i = 0; i < n; i++) {
            int best = 0;
            double best_d = INFINITY;
            for (int c = 0; c < K; c++) {
                double dist = 0;
                for (long j = 0; j < d; j++) dist += (X[i * d + j] - out[c * d + j]) * (X[i * d + j] - out[c * d + j]);
                if (dist < best_d) best_d = dist, best = c;
            }
            counts[best] += 1;
            for (long j = 0; j < d; j++) sums[best * d + j] += clip(X[i * d + j]);
        }
        for (int c = 0; c < K; c++) {
            double count = counts[c] + laplace(scale);
            for (long j = 0; j < d; j++) {
                double total = sums[c * d + j] + laplace(scale);
                if (count > 1) out[c * d + j] = clip(total / count);
            }
        }
    }
    return K * d;
}

static double number(char **p) {
    while (**p && !strchr("-0123456789", **p)) (*p)++;
    return strtod(*p, p);
}

int main(int argc, char **argv) {
    int kmeans = argc > 1 && strcmp(argv[1], "kmeans") == 0;
    long own = argc > 3 && strcmp(argv[2], "--own") == 0 ? atol(argv[3]) : 0;
    char *line = NULL, *p;
    size_t cap = 0;
    double out[K * 64];
    if (!own) {
        printf("{\"protocol\": \"dpaudit/1\", \"output\": \"%s\", \"name\": \"%s\"}\n", kmeans ? "centroids" : "vector",
               kmeans ? "kmeans" : "mean");
        fflush(stdout);
    }
    while (getline(&line, &cap, stdin) > 0) {
        p = strstr(line, "\"epsilon\":"); double eps = number(&p);
        p = strstr(line, "\"count\":"); long m = (long)number(&p);
        uint64_t *seeds = malloc((m + 1) * sizeof *seeds);
        p = strstr(line, "\"seeds\":");
        for (long i = 0; i < m; i++) seeds[i] = (uint64_t)number(&p);
        p = strstr(line, "\"n\":"); long n = (long)number(&p);
        p = strstr(line, "\"d\":"); long d = (long)number(&p);
        if (d > 64) d = 64; /* this benchmark's code handles up to 64 dimensions */
        double *X = malloc((n * d + 1) * sizeof *X);
        p = strstr(line, "\"data\":");
        for (long i = 0; i < n * d; i++) X[i] = number(&p);
        if (own) {
            struct timespec t0, t1, c0, c1;
            double check = 0;
            for (long r = 1; r <= own / 10 + 5; r++) check += out[release(kmeans, X, n, d, eps, (uint64_t)r, out) - 1];
            clock_gettime(CLOCK_MONOTONIC, &t0); /* after a tenth as many untimed releases: the steady state */
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
            for (long r = 1; r <= own; r++) check += out[release(kmeans, X, n, d, eps, (uint64_t)r, out) - 1];
            clock_gettime(CLOCK_MONOTONIC, &t1);
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
            printf("%.6f %.6f\n", ((t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3) / own,
                   ((c1.tv_sec - c0.tv_sec) * 1e6 + (c1.tv_nsec - c0.tv_nsec) / 1e3) / own);
            fprintf(stderr, "checksum %g\n", check);
            return 0;
        }
        fputs("{\"releases\": [", stdout);
        for (long i = 0; i < m; i++) {
            long values = release(kmeans, X, n, d, eps, seeds[i], out);
            fputs(i ? ", [" : "[", stdout);
            for (long v = 0; v < values; v++) {
                if (kmeans) printf(v % d ? ", %.17g" : (v ? "], [%.17g" : "[%.17g"), out[v]);
                else printf(v ? ", %.17g" : "%.17g", out[v]);
            }
            fputs(kmeans ? "]]" : "]", stdout);
        }
        fputs("]}\n", stdout);
        fflush(stdout);
        free(seeds);
        free(X);
    }
    free(line);
    return 0;
}
