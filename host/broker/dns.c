// Broker service "dns:NAME" (host/broker/broker.h): name lookups for
// kinds with allow_dns, on the broker's own threads, within the renderer's
// budget (limit_broker_requests) and the host's (CAPSA__DNS_PER_HOST).
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/host_internal.h"

// Name lookups run on the broker's own threads, not libuv's pool: a lookup
// a thread is in (getaddrinfo can block for the resolver's timeouts, seconds)
// holds nothing on the embedder's loop but one uv_async_t per host, so a
// dead renderer's or a closing host's lookups are dropped at once and
// capsa_host_close never waits for a resolver. Queued lookups are removed;
// running ones are orphaned, and their thread frees them when it returns.
#define DNS_THREADS 4

enum dns_state { DNS_QUEUED, DNS_RUNNING, DNS_DONE };

struct capsa__dns_req {
  struct capsa_host_renderer *r;  // loop thread only
  struct capsa__host_impl *h;
  struct capsa__dns_req *next;  // r's list of lookups (loop thread)
  // Under g_dns.mu:
  enum dns_state state;
  bool orphan;                   // nobody collects it: its thread frees it
  struct capsa__dns_req *qnext;  // the process-wide queue, or h's done list
  int status;                    // getaddrinfo's
  struct addrinfo *ai;
  unsigned incarnation;
  capsa_msg_t request;  // header only: the id to answer
  char name[256];
};

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct capsa__dns_req *head, *tail;  // queued, oldest first
  unsigned threads;
  unsigned delay_ms;  // test builds only: each lookup takes this long
  unsigned running;   // threads that have started
  pthread_cond_t started;
} g_dns = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 0, 0,
    PTHREAD_COND_INITIALIZER};

void capsa__broker_dns_delay_for_test(unsigned ms) {
  pthread_mutex_lock(&g_dns.mu);
  g_dns.delay_ms = ms;
  pthread_mutex_unlock(&g_dns.mu);
}

static void dns_free(struct capsa__dns_req *d) {
  if (d->ai) freeaddrinfo(d->ai);
  free(d);
}

static void *dns_thread(void *arg) {
  (void)arg;
  pthread_mutex_lock(&g_dns.mu);
  g_dns.running++;
  pthread_cond_broadcast(&g_dns.started);
  for (;;) {
    while (!g_dns.head) pthread_cond_wait(&g_dns.cv, &g_dns.mu);
    struct capsa__dns_req *d = g_dns.head;
    g_dns.head = d->qnext;
    if (!g_dns.head) g_dns.tail = NULL;
    d->qnext = NULL;
    d->state = DNS_RUNNING;
    unsigned delay = g_dns.delay_ms;
    pthread_mutex_unlock(&g_dns.mu);
    if (delay) {
      struct timespec ts = {delay / 1000, (long)(delay % 1000) * 1000000L};
      while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
      }
    }
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo *ai = NULL;
    int status = getaddrinfo(d->name, NULL, &hints, &ai);
    pthread_mutex_lock(&g_dns.mu);
    d->status = status;
    d->ai = ai;
    if (d->orphan) {
      dns_free(d);
      continue;
    }
    // Not orphaned: the host is open (its close orphans every lookup under
    // this lock before it closes the handle).
    d->state = DNS_DONE;
    d->qnext = d->h->broker.dns_done;
    d->h->broker.dns_done = d;
    uv_async_send(&d->h->broker.dns_async);
  }
  return NULL;
}

// A child forked from a process with a host has none of its threads, and
// may have forked while one held the lock: it starts afresh (the parent's
// lookups are the parent's).
static void dns_atfork_prepare(void) {
  pthread_mutex_lock(&g_dns.mu);
}
static void dns_atfork_parent(void) {
  pthread_mutex_unlock(&g_dns.mu);
}
static void dns_atfork_child(void) {
  pthread_mutex_init(&g_dns.mu, NULL);
  pthread_cond_init(&g_dns.cv, NULL);
  pthread_cond_init(&g_dns.started, NULL);
  g_dns.head = g_dns.tail = NULL;
  g_dns.threads = g_dns.running = 0;
}
static pthread_once_t g_dns_atfork_once = PTHREAD_ONCE_INIT;
static void dns_atfork_register(void) {
  pthread_atfork(dns_atfork_prepare, dns_atfork_parent, dns_atfork_child);
}

// Once per process, at a host's start: the threads, with every signal
// blocked (they never run the embedder's handlers). -EAGAIN when none could
// be created: the start fails, no renderer's request ever does.
static int dns_threads_start(void) {
  pthread_once(&g_dns_atfork_once, dns_atfork_register);
  pthread_mutex_lock(&g_dns.mu);
  int err = 0;
  if (g_dns.threads == 0) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int i = 0; i < DNS_THREADS; i++) {
      pthread_attr_t a;
      pthread_attr_init(&a);
      pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
      pthread_attr_setstacksize(&a, 256u << 10);
      pthread_t t;
      if (pthread_create(&t, &a, dns_thread, NULL) == 0) g_dns.threads++;
      pthread_attr_destroy(&a);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (g_dns.threads == 0) err = -EAGAIN;
    // Every thread running before this returns: the zygote is then forked
    // (raw clone) from a process whose threads are all started, so glibc's
    // setxid calls in it (setgroups) never wait for a thread half made.
    while (g_dns.running < g_dns.threads)
      pthread_cond_wait(&g_dns.started, &g_dns.mu);
  }
  pthread_mutex_unlock(&g_dns.mu);
  return err;
}

static void dns_unlink(struct capsa__dns_req *d) {
  struct capsa_host_renderer *r = d->r;
  for (struct capsa__dns_req **pp = &r->broker.dns; *pp; pp = &(*pp)->next) {
    if (*pp == d) {
      *pp = d->next;
      break;
    }
  }
  r->broker.dns_inflight--;
  if (--r->h->broker.dns_inflight == 0)
    uv_unref((uv_handle_t *)&r->h->broker.dns_async);
}

static void answer(struct capsa_host_renderer *r, struct capsa__dns_req *d) {
  char text[1024] = "";
  size_t n = 0;
  for (struct addrinfo *a = d->ai; d->status == 0 && a; a = a->ai_next) {
    char addr[INET6_ADDRSTRLEN] = "";
    const void *src =
        a->ai_family == AF_INET
            ? (const void *)&((struct sockaddr_in *)a->ai_addr)->sin_addr
            : (const void *)&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr;
    if (!inet_ntop(a->ai_family, src, addr, sizeof addr)) continue;
    if (strstr(text, addr)) continue;  // one line per address
    int w = snprintf(text + n, sizeof text - n, "%s\n", addr);
    if (w < 0 || (size_t)w >= sizeof text - n) break;
    n += (size_t)w;
  }
  capsa_msg_t resp;
  capsa_msg_init(&resp, CAPSA_MSG_RESOURCE_RESPONSE);
  resp.u.resource_response.status =
      d->status == 0 ? 0 : (d->status == EAI_NONAME ? -ENOENT : -EIO);
  resp.u.resource_response.mime = "text/plain";
  resp.u.resource_response.data = (capsa_bytes_t){(const uint8_t *)text, n};
  capsa_channel_reply(&r->ch, &d->request, &resp);
  // Off the caller's stack: the verdict goes to the state machine's hook.
  char why[CAPSA__VERDICT_MAX];
  const char *over = capsa__budget_queue_verdict(r, why);
  if (over) r->h->broker.verdict(r, over);
}

static void on_dns_async(uv_async_t *a) {
  struct capsa__host_impl *h = a->data;
  pthread_mutex_lock(&g_dns.mu);
  struct capsa__dns_req *done = h->broker.dns_done;
  h->broker.dns_done = NULL;
  pthread_mutex_unlock(&g_dns.mu);
  while (done) {
    struct capsa__dns_req *d = done;
    done = d->qnext;
    struct capsa_host_renderer *r = d->r;
    dns_unlink(d);
    if (r->state == R_READY && !r->kill_reason && r->restarts == d->incarnation)
      answer(r, d);
    dns_free(d);
    capsa__renderer_unpend(r);
  }
}

int capsa__broker_dns(struct capsa_host_renderer *r, const capsa_msg_t *req,
                      const char *name, char *why) {
  if (!r->h->kinds[r->kind].allow_dns) return -EACCES;
  size_t len = strlen(name);
  if (!len || len > 253) return -EINVAL;
  uint64_t budget = r->h->kinds[r->kind].limit_broker_requests;
  if (r->broker.dns_inflight >= budget) {
    snprintf(why, CAPSA__VERDICT_MAX,
             "broker budget: more than %llu dns lookups in flight",
             (unsigned long long)budget);
    return 0;  // to be ended: nothing to answer
  }
  if (r->h->broker.dns_inflight >= CAPSA__DNS_PER_HOST ||
      !r->h->broker.dns_async_inited)
    return -EBUSY;
  struct capsa__dns_req *d = calloc(1, sizeof *d);
  if (!d) return -ENOMEM;
  d->r = r;
  d->h = r->h;
  d->incarnation = r->restarts;
  d->request.type = req->type;
  d->request.flags = req->flags;
  d->request.request_id = req->request_id;
  d->request.seq = req->seq;
  d->request.origin = req->origin;  // the answer is bound to this channel
  memcpy(d->name, name, len + 1);
  d->next = r->broker.dns;
  r->broker.dns = d;
  r->broker.dns_inflight++;
  if (r->h->broker.dns_inflight++ == 0)
    uv_ref((uv_handle_t *)&r->h->broker.dns_async);
  r->pending++;
  pthread_mutex_lock(&g_dns.mu);
  d->state = DNS_QUEUED;
  if (g_dns.tail)
    g_dns.tail->qnext = d;
  else
    g_dns.head = d;
  g_dns.tail = d;
  pthread_cond_signal(&g_dns.cv);
  pthread_mutex_unlock(&g_dns.mu);
  return 0;
}

int capsa__broker_dns_start(struct capsa__host_impl *h) {
  // The lookup threads only for a host with a kind that may look names up
  // (allow_dns; kinds are fixed at start): capsa__broker_dns refuses every
  // other kind before anything is queued. A host without one (a tool that
  // compresses one file) starts none.
  bool dns = false;
  for (unsigned i = 0; i < h->nkinds; i++) dns = dns || h->kinds[i].allow_dns;
  int err = dns ? dns_threads_start() : 0;
  if (err < 0) return err;
  err = uv_async_init(h->loop, &h->broker.dns_async, on_dns_async);
  if (err < 0) return err;
  h->broker.dns_async.data = h;
  // Only lookups keep the loop up.
  uv_unref((uv_handle_t *)&h->broker.dns_async);
  h->broker.dns_async_inited = true;
  return 0;
}

void capsa__broker_dns_cancel(struct capsa_host_renderer *r) {
  // Under the lock: a queued lookup leaves the queue, a finished one the
  // done list (both then ours to free); a running one is orphaned, and its
  // thread frees it (not to be touched after the unlock).
  struct capsa__host_impl *h = r->h;
  struct capsa__dns_req *to_free = NULL;
  unsigned n = 0;
  pthread_mutex_lock(&g_dns.mu);
  for (struct capsa__dns_req *d = r->broker.dns, *next; d; d = next) {
    next = d->next;
    n++;
    d->orphan = true;
    if (d->state == DNS_RUNNING) continue;
    struct capsa__dns_req **list =
        d->state == DNS_QUEUED ? &g_dns.head : &h->broker.dns_done;
    struct capsa__dns_req *prev = NULL;
    for (struct capsa__dns_req **pp = list; *pp; pp = &(*pp)->qnext) {
      if (*pp == d) {
        *pp = d->qnext;
        if (list == &g_dns.head && g_dns.tail == d) g_dns.tail = prev;
        break;
      }
      prev = *pp;
    }
    d->qnext = to_free;
    to_free = d;
  }
  pthread_mutex_unlock(&g_dns.mu);
  while (to_free) {
    struct capsa__dns_req *d = to_free;
    to_free = d->qnext;
    dns_free(d);
  }
  r->broker.dns = NULL;
  r->broker.dns_inflight = 0;
  h->broker.dns_inflight -= n;
  if (h->broker.dns_inflight == 0 && h->broker.dns_async_inited)
    uv_unref((uv_handle_t *)&h->broker.dns_async);
  for (unsigned i = 0; i < n; i++) capsa__renderer_unpend(r);
}
