// See orphans.h.
#include "host/orphans.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/proc_view.h"

// While an adopted process still runs (killed, exiting), sweep again after
// this long: its SIGCHLD may have come before it was a zombie to take.
#define RETRY_MS 100

struct capsa__orphans {
  uv_signal_t sig;
  uv_timer_t retry;
  int open_handles;
};

struct proc_stat {
  char state;
  pid_t ppid, sid;
};

// /proc/PID/stat's state, parent and session: false when it is gone.
static bool stat_of(pid_t pid, struct proc_stat *st) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  // The command name may hold anything, ')' included: parse after the last.
  const char *p = strrchr(buf, ')');
  int pp = 0, pg = 0, s = 0;
  if (!p || sscanf(p + 1, " %c %d %d %d", &st->state, &pp, &pg, &s) != 4)
    return false;
  st->ppid = pp;
  st->sid = s;
  return true;
}

// Whether PID ran sandboxed: a seccomp filter and no_new_privs, as every
// zygote and renderer does (kept in /proc/PID/status after it exits).
static bool sandboxed(pid_t pid) {
  char path[64], buf[2048];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  return strstr(buf, "\nNoNewPrivs:\t1") && strstr(buf, "\nSeccomp:\t2");
}

// Whether a descriptor of this process is a pidfd of PID: a host here
// tracks it (and reaps it through that pidfd, with its exit status).
static bool pidfd_held(pid_t pid) {
  DIR *d = opendir("/proc/self/fdinfo");
  if (!d) return true;  // cannot tell: leave it
  char want[32];
  snprintf(want, sizeof want, "\nPid:\t%d\n", (int)pid);
  bool held = false;
  struct dirent *e;
  while (!held && (e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", atoi(e->d_name));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) continue;
    buf[n] = 0;
    held = strstr(buf, want) != NULL;
  }
  closedir(d);
  return held;
}

struct sweep {
  pid_t self, my_sid;
  int reaped;
  bool pending;  // an adopted process still runs
};

static void consider(pid_t pid, struct sweep *s) {
  struct proc_stat st;
  if (!stat_of(pid, &st) || st.ppid != s->self) return;
  bool leader = st.sid == pid;
  // A child forked here is in this session or (setsid) leads its own: only
  // an adopted process is in another session without leading it.
  bool adopted = !leader && st.sid != s->my_sid;
  if (!adopted && !leader) return;
  if (st.state != 'Z') {
    s->pending |= adopted;
    return;
  }
  // A leader is taken only when it was sandboxed and no host here holds its
  // pidfd: a zygote or renderer of a host that is gone (in a process that
  // exited, its children adopted here). The embedder's own setsid() children
  // are not sandboxed by capsa; its hosts' live ones have their pidfds here.
  if (leader && (!sandboxed(pid) || pidfd_held(pid))) return;
  siginfo_t si;
  memset(&si, 0, sizeof si);
  if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | __WALL) == 0 &&
      si.si_pid == pid)
    s->reaped++;
}

// Our children from /proc/self/task/*/children (CONFIG_PROC_CHILDREN), else
// from every /proc/PID/stat.
static struct sweep sweep_once(void) {
  struct sweep s = {getpid(), getsid(0), 0, false};
  bool listed = false;
  DIR *tasks = opendir("/proc/self/task");
  if (tasks) {
    struct dirent *t;
    while ((t = readdir(tasks)) != NULL) {
      if (t->d_name[0] < '1' || t->d_name[0] > '9') continue;
      char path[64];
      snprintf(path, sizeof path, "/proc/self/task/%d/children",
               atoi(t->d_name));
      FILE *f = fopen(path, "re");
      if (!f) continue;
      listed = true;
      int pid;
      while (fscanf(f, "%d", &pid) == 1) consider(pid, &s);
      fclose(f);
    }
    closedir(tasks);
  }
  if (listed) return s;
  DIR *d = opendir("/proc");
  if (!d) return s;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    consider((pid_t)atoi(e->d_name), &s);
  }
  closedir(d);
  return s;
}

int capsa__orphans_sweep(void) {
  return sweep_once().reaped;
}

static void on_retry(uv_timer_t *t);

static void sweep_and_rearm(struct capsa__orphans *o) {
  struct sweep s = sweep_once();
  if (s.pending && !uv_is_active((uv_handle_t *)&o->retry))
    uv_timer_start(&o->retry, on_retry, RETRY_MS, 0);
}

static void on_retry(uv_timer_t *t) {
  sweep_and_rearm(t->data);
}

static void on_sigchld(uv_signal_t *s, int signum) {
  (void)signum;
  sweep_and_rearm(s->data);
}

struct capsa__orphans *capsa__orphans_start(uv_loop_t *loop) {
  if (!capsa_proc_inherits_orphans()) return NULL;
  struct capsa__orphans *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  if (uv_signal_init(loop, &o->sig) < 0) {
    free(o);
    return NULL;
  }
  o->open_handles = 1;
  o->sig.data = o;
  uv_timer_init(loop, &o->retry);
  o->retry.data = o;
  o->open_handles = 2;
  // The host's other handles keep the loop alive; these must not.
  uv_unref((uv_handle_t *)&o->sig);
  uv_unref((uv_handle_t *)&o->retry);
  if (uv_signal_start(&o->sig, on_sigchld, SIGCHLD) < 0) {
    capsa__orphans_stop(o);
    return NULL;
  }
  sweep_and_rearm(o);
  return o;
}

static void on_closed(uv_handle_t *h) {
  struct capsa__orphans *o = h->data;
  if (--o->open_handles == 0) free(o);
}

void capsa__orphans_stop(struct capsa__orphans *o) {
  if (!o) return;
  sweep_once();
  uv_close((uv_handle_t *)&o->sig, on_closed);
  uv_close((uv_handle_t *)&o->retry, on_closed);
}
