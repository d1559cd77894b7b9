/* The column exchange of figure 3b as plain C loops, one process: what
 * copying a column costs on this machine, with nothing of onesided's or
 * Python's around it (docs/performance.md, "Strided data (figure 3b)").
 *
 *   gcc -O2 -o column_floor tools/column_floor.c
 *   for r in 64 1024 8192; do ./column_floor $r; done
 *
 * strided:            column 0 of a (rows x 64) into column 63 of b
 * pack + put:         column 0 into a temporary, then a memcpy into b's staging row
 * pack + put + unpack: the same, then the staging row into b's column 63
 * accumulate, strided: column 0 of a added into column 63 of b, each
 *                     element by a compare-exchange loop (float64 SUM as
 *                     the CPU-atomics path does it)
 * accumulate, pack:   column 0 into a temporary, then added into b's
 *                     contiguous staging row by the same loop */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* b += a, atomically per element: what a float64 SUM costs on the CPU. */
static void atomic_add(double* b, double a) {
  unsigned long long old = __atomic_load_n((unsigned long long*)b, __ATOMIC_RELAXED), next;
  do {
    double sum;
    memcpy(&sum, &old, sizeof sum);
    sum += a;
    memcpy(&next, &sum, sizeof next);
  } while (!__atomic_compare_exchange_n((unsigned long long*)b, &old, next, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const int rows = argc > 1 ? atoi(argv[1]) : 1024, cols = 64;
  double *a = malloc(sizeof(double) * rows * cols), *b = malloc(sizeof(double) * (rows * cols + rows)),
         *tmp = malloc(sizeof(double) * rows);
  for (int i = 0; i < rows * cols; i++) a[i] = i, b[i] = 0;
  const int n = 3000000 / rows;
  for (int rep = 0; rep < 3; rep++) {
    double t0 = now();
    for (int it = 0; it < n; it++) {
      for (int r = 0; r < rows; r++) b[r * cols + cols - 1] = a[r * cols];
      __asm__ volatile("" ::"r"(b) : "memory");
    }
    double t1 = now();
    for (int it = 0; it < n; it++) {
      for (int r = 0; r < rows; r++) tmp[r] = a[r * cols];
      memcpy(b + rows * cols, tmp, sizeof(double) * rows);
      __asm__ volatile("" ::"r"(b) : "memory");
    }
    double t2 = now();
    for (int it = 0; it < n; it++) {
      for (int r = 0; r < rows; r++) tmp[r] = a[r * cols];
      memcpy(b + rows * cols, tmp, sizeof(double) * rows);
      for (int r = 0; r < rows; r++) b[r * cols + cols - 1] = b[rows * cols + r];
      __asm__ volatile("" ::"r"(b) : "memory");
    }
    double t3 = now();
    for (int it = 0; it < n; it++) {
      for (int r = 0; r < rows; r++) atomic_add(&b[r * cols + cols - 1], a[r * cols]);
      __asm__ volatile("" ::"r"(b) : "memory");
    }
    double t4 = now();
    for (int it = 0; it < n; it++) {
      for (int r = 0; r < rows; r++) tmp[r] = a[r * cols];
      for (int r = 0; r < rows; r++) atomic_add(&b[rows * cols + r], tmp[r]);
      __asm__ volatile("" ::"r"(b) : "memory");
    }
    double t5 = now();
    printf("rows %d: strided %.2f us, pack + put %.2f us, pack + put + unpack %.2f us, "
           "accumulate strided %.2f us, accumulate pack %.2f us\n", rows,
           (t1 - t0) / n * 1e6, (t2 - t1) / n * 1e6, (t3 - t2) / n * 1e6, (t4 - t3) / n * 1e6,
           (t5 - t4) / n * 1e6);
  }
  free(a), free(b), free(tmp);
  return 0;
}
