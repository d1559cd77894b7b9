/* The floor a cross-memory Create window's epochs stand on: an 8-byte
 * process_vm_writev and process_vm_readv between two processes, and a
 * getppid for the bare cost of entering the kernel, each a loop of 200000
 * calls, three rounds (docs/performance.md, "Create windows under locks").
 *
 *   cc -O2 tools/process_vm_floor.c -o /tmp/process_vm_floor && /tmp/process_vm_floor
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t target[8]; /* the child's copy is the one written */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
  const pid_t child = fork();
  if (child == 0)
    for (;;) pause();
  int64_t value = 1, back = 0;
  const int n = 200000;
  struct iovec out = {&value, 8}, in = {&back, 8}, there = {(void*)target, 8};
  for (int round = 0; round < 3; ++round) {
    const double t0 = now();
    for (int i = 0; i < n; ++i) process_vm_writev(child, &out, 1, &there, 1, 0);
    const double t1 = now();
    for (int i = 0; i < n; ++i) process_vm_readv(child, &in, 1, &there, 1, 0);
    const double t2 = now();
    for (int i = 0; i < n; ++i) getppid();
    const double t3 = now();
    printf("process_vm_writev %.3f us  process_vm_readv %.3f us  getppid %.3f us\n", (t1 - t0) / n * 1e6,
           (t2 - t1) / n * 1e6, (t3 - t2) / n * 1e6);
  }
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  return 0;
}
