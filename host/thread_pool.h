// Internal (capsa__): whether capsa_host_start starts libuv's thread pool.
//
//   capsa__thread_pool_not_used();   // before the first capsa_host_start
//
// capsa_host_start starts libuv's pool (its threads are made once per
// process, at the first job), so that an embedder's own first pool job
// (uv_queue_work, uv_fs_* with a callback, uv_getaddrinfo) never comes when
// a renderer has filled the process table: libuv aborts the process when it
// cannot make the threads then. The host itself queues no pool work. A
// program that never does either (the capsa CLI's one-shot commands) says
// so here, and its hosts start no pool threads it would only tear down.
#ifndef CAPSA_HOST_THREAD_POOL_H_
#define CAPSA_HOST_THREAD_POOL_H_

#ifdef __cplusplus
extern "C" {
#endif

// This process never queues work on libuv's thread pool: capsa_host_start
// leaves it unstarted. Not undone; call before the first capsa_host_start
// (a pool started already stays).
void capsa__thread_pool_not_used(void);

#ifdef __cplusplus
}
#endif

#endif  // CAPSA_HOST_THREAD_POOL_H_
