/* A differentially private mean of records in the public box [-15, 15]^d (blobs-2d's), audited through dpaudit's
 * protocol for programs (docs/executables.md): JSON lines on stdin and stdout.  Each coordinate of the mean of the
 * clipped records gets Laplace noise of scale d (HI - LO) / (n epsilon): the L1 sensitivity of the mean when one
 * record is replaced, so it is epsilon-DP under --neighbours replace.  With --broken the scale is 10 times too small.
 *
 *   cc -O2 -o dp_mean examples/executables/dp_mean.c -lm
 *   dpaudit estimate-eps -m "cmd:./dp_mean" --eps 1 --neighbours replace             # consistent
 *   dpaudit estimate-eps -m "cmd:./dp_mean --broken" --eps 1 --neighbours replace    # VIOLATION
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LO (-15.0)
#define HI 15.0

static uint64_t state; /* splitmix64, seeded for each release from the seed dpaudit sends for it */

static double uniform(void) { /* in (0, 1) */
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (((z ^ (z >> 31)) >> 11) + 0.5) * 0x1.0p-53;
}

static double number(char **p) { /* the next number on the line, from *p on */
    while (**p && !strchr("-0123456789", **p)) (*p)++;
    return strtod(*p, p);
}

int main(int argc, char **argv) {
    int broken = argc > 1 && strcmp(argv[1], "--broken") == 0;
    char *line = NULL, *p;
    size_t cap = 0;
    printf("{\"protocol\": \"dpaudit/1\", \"output\": \"vector\", \"name\": \"%s\"}\n", broken ? "dp_mean_broken" : "dp_mean");
    fflush(stdout);
    while (getline(&line, &cap, stdin) > 0) { /* {"op": "release", "epsilon": E, "count": M, "seeds": [...], "n": N, "d": D, "params": {...}, "data": [[...], ...]} */
        p = strstr(line, "\"epsilon\":"); double eps = number(&p);
        p = strstr(line, "\"count\":"); long m = (long)number(&p);
        uint64_t *seeds = malloc((m + 1) * sizeof *seeds);
        p = strstr(line, "\"seeds\":");
        for (long i = 0; i < m; i++) seeds[i] = (uint64_t)number(&p);
        p = strstr(line, "\"n\":"); long n = (long)number(&p);
        p = strstr(line, "\"d\":"); long d = (long)number(&p);
        double *mean = calloc(d + 1, sizeof *mean), records = n > 0 ? n : 1;
        p = strstr(line, "\"data\":");
        for (long i = 0; i < n * d; i++) mean[i % d] += fmin(fmax(number(&p), LO), HI) / records;
        double scale = d * (HI - LO) / (records * eps) / (broken ? 10.0 : 1.0);
        fputs("{\"releases\": [", stdout);
        for (long i = 0; i < m; i++) {
            state = seeds[i];
            fputs(i ? ", [" : "[", stdout);
            for (long j = 0; j < d; j++) printf(j ? ", %.17g" : "%.17g", mean[j] + scale * log(uniform() / uniform()));
            fputs("]", stdout);
        }
        fputs("]}\n", stdout);
        fflush(stdout);
        free(seeds);
        free(mean);
    }
    free(line);
    return 0;
}
