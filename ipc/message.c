// capsa_msg_t helpers: initialisation and handle ownership.
#include "ipc/message.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ipc/message_table.h"

void capsa_msg_init(capsa_msg_t *msg, capsa_msg_type_t type) {
  memset(msg, 0, sizeof *msg);
  msg->type = type;
  for (int i = 0; i < CAPSA_IPC_MAX_HANDLES; i++) msg->handles[i].fd = -1;
}

void capsa_msg_init_iface(capsa_msg_t *msg, const struct capsa_interface *iface,
                          uint32_t id, const void *value) {
  capsa_msg_init(msg, CAPSA_MSG_INTERFACE);
  msg->u.iface.iface = iface;
  msg->u.iface.id = id;
  msg->u.iface.value = value;
}

int capsa_msg_add_handle(capsa_msg_t *msg, int fd, capsa_handle_kind_t kind,
                         const capsa_rights_t *rights, uint64_t size,
                         bool writable) {
  if (fd < 0 || rights == NULL || kind < CAPSA_HANDLE_SHM ||
      kind > CAPSA_HANDLE_FILE)
    return -EINVAL;
  if (msg->handle_count >= CAPSA_IPC_MAX_HANDLES) return -E2BIG;
  capsa_handle_t *h = &msg->handles[msg->handle_count];
  h->fd = fd;
  h->kind = kind;
  h->rights = *rights;
  h->size = size;
  h->writable = writable;
  return (int)msg->handle_count++;
}

int capsa_msg_take_handle(capsa_msg_t *msg, uint32_t i) {
  if (i >= msg->handle_count || i >= CAPSA_IPC_MAX_HANDLES ||
      msg->handles[i].fd < 0)
    return -EBADF;
  int fd = msg->handles[i].fd;
  msg->handles[i].fd = -1;
  return fd;
}

void capsa_msg_close_handles(capsa_msg_t *msg) {
  for (int i = 0; i < CAPSA_IPC_MAX_HANDLES; i++) {
    if (msg->handles[i].fd >= 0) close(msg->handles[i].fd);
    msg->handles[i].fd = -1;
  }
}

const char *capsa_msg_type_name(uint32_t type) {
  const capsa__msg_row_t *row = capsa__msg_row(type);
  return row != NULL ? row->name : "?";
}
