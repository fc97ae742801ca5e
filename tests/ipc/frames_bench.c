// What a frame handoff costs with a chain (ipc/frames.h), against copying a
// 3 MiB frame and against a new frozen (F_SEAL_WRITE) region per frame, the
// one way to make a frame the renderer cannot change under the host. Both
// sides run in this process: the message that carries a present is the same
// for all three and is left out (a frozen region also passes a descriptor,
// which is not counted either). Not a test: figures for docs/frames.md.
//
//   out/default/frames_bench [frames]
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ipc/frames.h"
#include "ipc/shm.h"

enum { W = 1024, H = 768, STRIDE = W * 4 };
static const size_t kFrame = (size_t)STRIDE * H;  // 3 MiB

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

// The host reads one byte a page, as a consumer touches a frame: in a new
// mapping each is a page fault, in the chain's warm mapping none is.
static volatile uint8_t sink;
static void touch(const uint8_t *p, size_t len) {
  uint8_t s = 0;
  for (size_t i = 0; i < len; i += 4096) s ^= p[i];
  sink = s;
}

static capsa_frame_desc_t geometry(void) {
  capsa_frame_desc_t d = {0};
  d.width = W;
  d.height = H;
  d.stride = STRIDE;
  d.format = CAPSA_FRAMES_RGBA8;
  return d;
}

// One frame through the chain; `draw` and `copy` say what else is counted.
static int chain_frame(capsa_frames_host_t *h, capsa_frames_renderer_t *r,
                       bool draw, uint8_t *copy, int k) {
  void *px;
  size_t len;
  if (capsa_frames_renderer_acquire(r, &px, &len) < 0) return -1;
  if (draw) memset(px, k & 0xff, kFrame);
  capsa_frame_desc_t d = geometry();
  if (capsa_frames_renderer_present(r, &d) < 0) return -1;
  if (capsa_frames_host_present(h, &d) < 0) return -1;
  capsa_frame_view_t f;
  if (capsa_frames_host_latest(h, &f) != 1) return -1;
  if (copy) {
    if (capsa_frames_host_copy(h, copy, kFrame) < 0) return -1;
    touch(copy, f.len);
  } else if (draw) {
    touch(f.pixels, f.len);
  }
  return capsa_frames_host_release(h);
}

// A region per frame: made, drawn, frozen, mapped by the host as frozen.
static int frozen_frame(int k) {
  capsa_shm_region_t r, in;
  int err = capsa_shm_create(kFrame, "bench", CAPSA_SHM_CREATOR_FREEZES, &r);
  if (err < 0) return err;
  memset(r.base, k & 0xff, kFrame);
  err = capsa_shm_freeze(&r);
  int fd = err < 0 ? -1 : dup(r.fd);  // as if received over SCM_RIGHTS
  if (fd >= 0) {
    err = capsa_shm_map_fd(fd, r.size, CAPSA_SHM_READS_FROZEN, &in);
    if (err == 0) {
      touch(in.base, kFrame);
      capsa_shm_close(&in);
    } else {
      close(fd);
    }
  }
  capsa_shm_close(&r);
  return err;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 200;
  if (n < 5 || n > 100000) {
    fprintf(stderr, "usage: frames_bench [frames, 5..100000]\n");
    return 2;
  }
  capsa_frames_host_t h;
  capsa_frames_renderer_t r;
  int b, c;
  if (capsa_frames_host_init(&h, 3, kFrame, "bench") < 0 ||
      capsa_frames_host_fds(&h, &b, &c) < 0 ||
      capsa_frames_renderer_map(&r, b, c, h.count, h.buffer_size,
                                h.control.size) < 0) {
    fprintf(stderr, "frames_bench: cannot make a chain\n");
    return 1;
  }
  uint8_t *copy = malloc(kFrame);
  double *t = malloc(sizeof *t * (size_t)n);
  if (!copy || !t) return 1;
  memset(copy, 1, kFrame);
  for (int k = 0; k < 6; k++) chain_frame(&h, &r, true, NULL, k);  // warm

  struct row {
    const char *what;
    double us;
  } rows[5];
  const char *names[5] = {
      "chain handoff (acquire, present, latest, release)",
      "copy of the held 3 MiB frame (capsa_frames_host_copy)",
      "chain: draw 3 MiB + handoff + host reads it",
      "chain + copy: draw + handoff + copy + host reads the copy",
      "frozen region per frame: create, draw, freeze, map, read",
  };
  for (int row = 0; row < 5; row++) {
    for (int k = 0; k < n; k++) {
      double t0 = now_us();
      int err = 0;
      if (row == 0) err = chain_frame(&h, &r, false, NULL, k);
      if (row == 1) {
        // Only the copy is timed: take a frame first.
        chain_frame(&h, &r, false, NULL, k);
        capsa_frame_desc_t d = geometry();
        void *px;
        size_t len;
        capsa_frames_renderer_acquire(&r, &px, &len);
        capsa_frames_renderer_present(&r, &d);
        capsa_frames_host_present(&h, &d);
        capsa_frame_view_t f;
        capsa_frames_host_latest(&h, &f);
        t0 = now_us();
        err = capsa_frames_host_copy(&h, copy, kFrame) < 0 ? -1 : 0;
        double t1 = now_us();
        capsa_frames_host_release(&h);
        t[k] = t1 - t0;
        if (err < 0) break;
        continue;
      }
      if (row == 2) err = chain_frame(&h, &r, true, NULL, k);
      if (row == 3) err = chain_frame(&h, &r, true, copy, k);
      if (row == 4) err = frozen_frame(k);
      t[k] = now_us() - t0;
      if (err < 0) {
        fprintf(stderr, "frames_bench: %s: %s\n", names[row], strerror(-err));
        return 1;
      }
    }
    rows[row].what = names[row];
    rows[row].us = median(t, n);
  }
  printf("frame %dx%d RGBA (%zu bytes), %d frames a row, median per frame\n", W,
         H, kFrame, n);
  for (int row = 0; row < 5; row++)
    printf("  %-58s %10.2f us\n", rows[row].what, rows[row].us);
  printf(
      "ratios: copy / chain handoff %.0fx; draw+copy / draw %.2fx; "
      "frozen / draw %.2fx\n",
      rows[1].us / rows[0].us, rows[3].us / rows[2].us,
      rows[4].us / rows[2].us);
  free(copy);
  free(t);
  capsa_frames_renderer_close(&r);
  capsa_frames_host_close(&h);
  return 0;
}
