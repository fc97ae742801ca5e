// The hostile demo kind on the CLI's side. See demos/hostile/hostile_demo.h.
#include "demos/hostile/hostile_demo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demos/hostile/hostile.capsa.h"
#include "host/kind_registry.h"
#include "ipc/handle.h"

// Found by name in the exec'd zygote image (host/kind_registry.h).
CAPSA_RENDERER_KIND(hostile, "hostile", capsa_renderer_main,
                    &capsa_hostile_renderer)

static void hostile_ready(struct capsa_cli_job *job) {
  char text[64];
  int n = snprintf(text, sizeof text, "host-pid=%d", (int)getpid());
  int fd = capsa_cli_input_region((const uint8_t *)text, (size_t)n);
  if (fd < 0) {
    capsa_cli_job_finish(job, fd, "cannot make the shm region");
    return;
  }
  capsa_demo_hostile_attack_t a;
  capsa_demo_hostile_attack_init(&a);
  capsa_msg_t m;
  capsa_msg_init_iface(&m, &capsa_demo_hostile_interface,
                       CAPSA_DEMO_HOSTILE_ATTACK, &a);
  capsa_rights_t ro;
  capsa_handle_max_rights(CAPSA_HANDLE_SHM, false, &ro);
  int err = a.target =
      capsa_msg_add_handle(&m, fd, CAPSA_HANDLE_SHM, &ro, (uint64_t)n, false);
  if (err >= 0) err = capsa_renderer_send(job->r, &m);
  if (err < 0) {
    close(fd);
    capsa_cli_job_finish(job, err, "cannot send");
  }
}

int capsa_cli_hostile(struct capsa_cli_host *h, struct capsa_cli_job *job) {
  memset(job, 0, sizeof *job);
  job->kind = "hostile";
  job->on_ready = hostile_ready;
  capsa_cli_run_job(h, capsa_cli_host_kind(h, "hostile"), job, 120000);
  // Success = the summary says nothing escaped and the host then killed it
  // for its garbage message.
  bool clean = false;
  for (size_t i = 0; i < job->nlogs; i++)
    if (strncmp(job->logs[i], CAPSA_HOSTILE_SUMMARY,
                strlen(CAPSA_HOSTILE_SUMMARY)) == 0 &&
        strstr(job->logs[i], " 0 escaped, 0 unexpected"))
      clean = true;
  bool killed = job->last_event == CAPSA_EV_BAD_MESSAGE ||
                strncmp(job->outcome, "bad-message", 11) == 0;
  job->status = clean && killed ? 0 : -EPERM;
  return job->status;
}

// `capsa demo`: the hostile renderer, and with -v (or when it got anywhere)
// its attempts.
static int demo(struct capsa_cli_host *h, struct capsa_cli_demo *d) {
  struct capsa_cli_job job;
  int err = capsa_cli_hostile(h, &job);
  int attacks = 0;
  const char *summary = "";
  size_t slen = strlen(CAPSA_HOSTILE_SUMMARY);
  for (size_t i = 0; i < job.nlogs; i++) {
    if (strncmp(job.logs[i], CAPSA_HOSTILE_SUMMARY, slen) == 0)
      summary = job.logs[i] + slen + 1;
    else
      attacks++;
  }
  // Attacks whose target this kernel lacks (the i386 entry) are said so.
  int absent = 0;
  const char *a = strstr(summary, " absent in this kernel");
  if (a) {
    while (a > summary && a[-1] >= '0' && a[-1] <= '9') a--;
    absent = atoi(a);
  }
  char absent_text[64] = "";
  if (absent > 0)
    snprintf(absent_text, sizeof absent_text, " (%d absent in this kernel)",
             absent);
  char outcome[256];
  if (err == 0)
    snprintf(outcome, sizeof outcome,
             "%d attacks, none escaped%s; killed for bad message", attacks,
             absent_text);
  else
    snprintf(outcome, sizeof outcome, "FAILED: %s | %s", summary, job.outcome);
  capsa_cli_demo_row(&job, outcome);
  if (d->verbose || err != 0) {
    printf("\nhostile renderer's attempts (from inside its sandbox):\n");
    for (size_t i = 0; i < job.nlogs; i++) printf("    %s\n", job.logs[i]);
  }
  capsa_cli_job_free(&job);
  return err;
}

static void kind_options(capsa_kind_options_t *k, const int *fds,
                         unsigned nfds) {
  (void)fds, (void)nfds;
  k->heartbeat_ms = 0;  // attacks take a while; the host kills it anyway
}

const struct capsa_demo_kind capsa__demo_hostile = {
    .name = "hostile",
    .entry = capsa_renderer_main,
    .handlers = &capsa_hostile_renderer,
    .kind_options = kind_options,
    .demo = demo,
};
