// capsa gzip / capsa gunzip: zlib inside a sandboxed renderer that holds
// only its input (read-only) and its output region (write-only), as in the
// Capsicum paper's gzip. Output is interchangeable with gzip(1) both ways.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demos/gzip/gzip_demo.h"
#include "host/cli/commands.h"
#include "host/thread_pool.h"

static const char kUsage[] = "[-c] [-1..-9] [FILE]";

static int read_all(int fd, uint8_t **out, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  if (!buf) return -ENOMEM;
  for (;;) {
    if (n == cap) {
      uint8_t *b = realloc(buf, cap * 2);
      if (!b) {
        free(buf);
        return -ENOMEM;
      }
      buf = b;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = -errno;
      free(buf);
      return e;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  *out = buf;
  *len = n;
  return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -errno;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int run(const char *name, bool decompress, int argc, char **argv) {
  bool to_stdout = false;
  int level = 6;
  const char *file = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-c") == 0 || strcmp(a, "--stdout") == 0) {
      to_stdout = true;
    } else if (strcmp(a, "-d") == 0) {
      decompress = true;
    } else if (a[0] == '-' && a[1] >= '1' && a[1] <= '9' && !a[2]) {
      level = a[1] - '0';
    } else if (strcmp(a, "--help") == 0) {
      printf(
          "usage: capsa %s %s\n  no FILE: stdin to stdout; FILE: writes "
          "FILE.gz (gunzip: FILE without .gz), keeps FILE\n",
          name, kUsage);
      return 0;
    } else if (a[0] == '-' && a[1]) {
      return capsa_cli_usage_error(name, kUsage, "unknown option", a);
    } else if (!file) {
      file = a;
    } else {
      return capsa_cli_usage_error(name, kUsage, "more than one file", a);
    }
  }
  int in_fd = 0;
  char out_path[4096] = "";
  if (file) {
    in_fd = capsa_cli_open_input(name, file);
    if (in_fd < 0) return 1;
    if (!to_stdout) {
      size_t l = strlen(file);
      if (decompress) {
        if (l < 4 || strcmp(file + l - 3, ".gz") != 0) {
          fprintf(stderr, "capsa %s: %s: unknown suffix (expected .gz)\n", name,
                  file);
          close(in_fd);
          return 1;
        }
        snprintf(out_path, sizeof out_path, "%.*s", (int)(l - 3), file);
      } else {
        snprintf(out_path, sizeof out_path, "%s.gz", file);
      }
    }
  } else if (!to_stdout && isatty(1) && !decompress) {
    fprintf(stderr, "capsa %s: compressed data not written to a terminal\n",
            name);
    return 1;
  }
  // Every message names what it is about: FILE, or stdin/stdout.
  const char *in_name = file ? file : "stdin";
  const char *out_name = out_path[0] ? out_path : "stdout";
  uint8_t *in = NULL, *out = NULL;
  size_t in_len = 0, out_len = 0;
  int err = read_all(in_fd, &in, &in_len);
  if (file) close(in_fd);
  if (err < 0) {
    fprintf(stderr, "capsa %s: %s: read: %s\n", name, in_name, strerror(-err));
    return 1;
  }
  // Nothing here queues libuv thread-pool work: no pool threads to start.
  capsa__thread_pool_not_used();
  struct capsa_cli_host h;
  // The gzip kind alone: no other kind's policy in the zygote, no fonts.
  const struct capsa_demo_kind *kind = &capsa__demo_gzip;
  err = capsa_cli_host_open(&h, &kind, 1, false);
  if (err < 0) {
    fprintf(stderr, "capsa %s: cannot start the host: %s%s%s\n", name,
            strerror(-err), h.start_error[0] ? ": " : "", h.start_error);
    free(in);
    return 1;
  }
  struct capsa_cli_job job;
  err = capsa_cli_gzip(
      &h, decompress ? CAPSA_GZIP_OP_GUNZIP : CAPSA_GZIP_OP_COMPRESS, level, in,
      in_len, &out, &out_len, &job);
  capsa_cli_host_close(&h);
  free(in);
  for (size_t i = 0; i < job.nlogs; i++)  // the renderer's own warnings
    fprintf(stderr, "capsa %s: renderer: %s\n", name, job.logs[i]);
  if (err < 0) {
    fprintf(stderr, "capsa %s: %s: %s\n", name, in_name,
            job.outcome[0] ? job.outcome : strerror(-err));
    capsa_cli_job_free(&job);
    return 1;
  }
  capsa_cli_job_free(&job);
  int out_fd = 1;
  if (out_path[0]) {
    out_fd = open(out_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out_fd < 0) {
      fprintf(stderr, "capsa %s: %s: %s\n", name, out_path, strerror(errno));
      free(out);
      return 1;
    }
  }
  err = write_all(out_fd, out, out_len);
  free(out);
  if (out_path[0] && close(out_fd) < 0 && err == 0) err = -errno;
  if (err < 0) {
    fprintf(stderr, "capsa %s: %s: write: %s\n", name, out_name,
            strerror(-err));
    if (out_path[0]) unlink(out_path);  // no truncated output left behind
    return 1;
  }
  return 0;
}

int capsa_cmd_gzip(int argc, char **argv) {
  return run("gzip", false, argc, argv);
}

int capsa_cmd_gunzip(int argc, char **argv) {
  return run("gunzip", true, argc, argv);
}
