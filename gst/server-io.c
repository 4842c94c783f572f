/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The server's I/O thread: accepts clients, runs their handshake, reads
 * their messages, drops the ones that leave or misbehave, and tells the
 * callbacks. server.h has the contract.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "server-private.h"

#define GST_CAT_DEFAULT cudaipc_server_debug

/* How long to stop accepting after accept() failed for want of fds. */
#define ACCEPT_PAUSE (100 * G_TIME_SPAN_MILLISECOND)

/* Messages read from one client per wake-up, so a chatty client cannot
 * starve the others. */
#define MAX_MSGS_PER_WAKEUP 64

/* What the I/O thread tells the callbacks once the lock is released */
typedef enum
{
  NOTICE_JOINED,
  NOTICE_LEFT,
  NOTICE_WARNING,
} NoticeType;

typedef struct
{
  NoticeType type;
  gchar *name;                  /* JOINED, LEFT */
  gint pid;
  gchar *text;                  /* LEFT: the reason; WARNING: user text */
  gchar *debug;                 /* WARNING */
} Notice;

/* Notices */

static void
notice_free (gpointer data)
{
  Notice *n = data;

  g_free (n->name);
  g_free (n->text);
  g_free (n->debug);
  g_free (n);
}

static void
queue_client_notice (GPtrArray * notices, NoticeType type, Client * c,
    const gchar * reason)
{
  Notice *n = g_new0 (Notice, 1);

  n->type = type;
  n->name = g_strdup (c->name);
  n->pid = c->pid;
  n->text = g_strdup (reason);
  g_ptr_array_add (notices, n);
}

static void
queue_warning (GPtrArray * notices, gchar * text, gchar * debug)
{
  Notice *n = g_new0 (Notice, 1);

  n->type = NOTICE_WARNING;
  n->text = text;
  n->debug = debug;
  g_ptr_array_add (notices, n);
}

/* Calls back for, and empties, @notices; the lock must not be held. */
static void
give_notices (CudaIpcServer * s, GPtrArray * notices)
{
  const CudaIpcServerCallbacks *cb = &s->callbacks;

  for (guint i = 0; i < notices->len; i++) {
    Notice *n = g_ptr_array_index (notices, i);

    switch (n->type) {
      case NOTICE_JOINED:
        if (cb->client_joined)
          cb->client_joined (n->name, n->pid, s->user_data);
        break;
      case NOTICE_LEFT:
        if (cb->client_left)
          cb->client_left (n->name, n->pid, n->text, s->user_data);
        break;
      case NOTICE_WARNING:
        if (cb->warning)
          cb->warning (n->text, n->debug ? n->debug : "", s->user_data);
        break;
    }
  }
  g_ptr_array_set_size (notices, 0);
}

/* Clients */

void
cudaipc_server_wake_io (CudaIpcServer * s)
{
  guint64 one = 1;
  ssize_t n;

  if (s->wake_fd < 0)
    return;
  do {
    n = write (s->wake_fd, &one, sizeof (one));
  } while (n < 0 && errno == EINTR);
  /* EAGAIN: the counter is already non-zero, the thread will wake */
}

/* Most messages read from a client's socket before it is closed. */
#define MAX_DRAIN_MSGS 1024

static void
client_free (Client * c)
{
  /* A socket closed with unread messages makes the peer's next read fail
   * with ECONNRESET, ahead of the BYE we sent: so read what it sent (its
   * fds closed with each message) until nothing is left, or enough. */
  for (guint i = 0; c->conn && i < MAX_DRAIN_MSGS; i++) {
    CudaIpcMsg msg;
    gint ret = cudaipc_conn_recv (c->conn, &msg);

    if (ret == 0)
      cudaipc_msg_clear (&msg);
    else if (ret == -EAGAIN || ret == -EPIPE)
      break;
  }
  cudaipc_conn_free (c->conn);
  g_free (c->name);
  g_free (c->reason);
  g_free (c->warning);
  g_free (c);
}

/* Marks @c dead: no more messages to it, its slots are free again. The
 * I/O thread frees it and gives the notices. @bye_text NULL: no BYE. */
static void
client_drop_locked (CudaIpcServer * s, Client * c, guint bye_reason,
    const gchar * bye_text, gchar * reason, gchar * warning)
{
  if (c->dead) {
    g_free (reason);
    g_free (warning);
    return;
  }

  GST_INFO ("%s: dropping client %u '%s' (pid %d): %s", s->name, c->id,
      c->name, c->pid, reason);

  if (bye_text) {
    CudaIpcMsg msg;

    cudaipc_msg_init (&msg, CUDAIPC_MSG_BYE);
    msg.u.bye.reason = bye_reason;
    msg.u.bye.text = bye_text;
    /* best effort: the peer may not be reading or already gone */
    (void) cudaipc_conn_send (c->conn, &msg);
  }

  c->dead = TRUE;
  c->reason = reason;
  c->warning = warning;
  if (s->ring) {
    guint n = cudaipc_ring_release_all (s->ring, &c->lease);

    if (n > 0)
      GST_DEBUG ("%s: client %u gave back %u slot(s)", s->name, c->id, n);
  }
  g_cond_broadcast (&s->cond);
  cudaipc_server_wake_io (s);
}

void
cudaipc_server_drop_client_locked (CudaIpcServer * s, Client * c,
    guint bye_reason, const gchar * bye_text, gchar * reason, gchar * warning)
{
  client_drop_locked (s, c, bye_reason, bye_text, reason, warning);
}

gboolean
cudaipc_server_send_locked (CudaIpcServer * s, Client * c,
    const CudaIpcMsg * msg)
{
  gint ret;

  if (c->dead)
    return FALSE;

  ret = cudaipc_conn_send (c->conn, msg);
  if (ret == 0)
    return TRUE;

  if (ret == -EAGAIN) {
    client_drop_locked (s, c, CUDAIPC_BYE_TOO_SLOW,
        "the consumer did not read its messages in time",
        g_strdup ("too slow: its socket buffer is full"),
        g_strdup_printf ("Consumer '%s' (pid %d) is not reading its "
            "messages and was disconnected", c->name, c->pid));
  } else if (ret == -EPIPE) {
    client_drop_locked (s, c, 0, NULL, g_strdup ("connection closed"), NULL);
  } else {
    client_drop_locked (s, c, 0, NULL,
        g_strdup_printf ("sending %s failed: %s",
            cudaipc_msg_type_name (msg->type), g_strerror (-ret)),
        g_strdup_printf ("Could not send %s to consumer '%s' (pid %d): %s",
            cudaipc_msg_type_name (msg->type), c->name, c->pid,
            g_strerror (-ret)));
  }
  return FALSE;
}

static void
client_handle_hello_locked (CudaIpcServer * s, Client * c,
    const CudaIpcHello * hello, GPtrArray * notices)
{
  CudaIpcBackend backend = cudaipc_device_get_backend (s->dev);
  guint8 uuid[CUDAIPC_UUID_LEN];
  gchar *text;

  if (hello->name && hello->name[0]) {
    g_free (c->name);
    c->name = g_utf8_make_valid (hello->name, -1);
  }

  /* Credentials are checked here, before the client gets anything of the
   * stream (the producer's HELLO says only who it is), so that a policy set
   * right after the server was made applies to every client. */
  if (!cudaipc_server_peer_allowed_locked (s, c->uid, c->gid)) {
    text = g_strdup_printf ("user %u (group %u) may not connect to this "
        "producer", c->uid, c->gid);
    client_drop_locked (s, c, CUDAIPC_BYE_PERMISSION, text,
        g_strdup ("refused by its credentials"),
        g_strdup_printf ("Refused consumer '%s' (pid %d): %s; allow it with "
            "the allowed-users or allowed-groups property", c->name, c->pid,
            text));
    g_free (text);
    return;
  }

  if (hello->backend != (guint32) backend) {
    text = g_strdup_printf ("the consumer uses the %s backend, this producer "
        "uses %s", cudaipc_backend_name (hello->backend),
        cudaipc_backend_name (backend));
    client_drop_locked (s, c, CUDAIPC_BYE_BACKEND, text,
        g_strdup_printf ("backend mismatch: %s", text),
        g_strdup_printf ("Refused consumer '%s' (pid %d): %s", c->name,
            c->pid, text));
    g_free (text);
    return;
  }

  /* a consumer on another GPU maps the slots with peer access (it checked
   * that its device can): nothing changes here */
  cudaipc_device_get_uuid (s->dev, uuid);
  if (backend == CUDAIPC_BACKEND_CUDA &&
      memcmp (uuid, hello->uuid, CUDAIPC_UUID_LEN) != 0 &&
      (hello->caps & CUDAIPC_CAP_PEER)) {
    gchar theirs[CUDAIPC_UUID_STRING_LEN];

    cudaipc_uuid_format (hello->uuid, theirs);
    GST_INFO ("%s: consumer '%s' (pid %d) is on GPU %s and reads the slots "
        "through peer access", s->name, c->name, c->pid, theirs);
  } else if (backend == CUDAIPC_BACKEND_CUDA &&
      memcmp (uuid, hello->uuid, CUDAIPC_UUID_LEN) != 0) {
    gchar ours[CUDAIPC_UUID_STRING_LEN], theirs[CUDAIPC_UUID_STRING_LEN];

    cudaipc_uuid_format (uuid, ours);
    cudaipc_uuid_format (hello->uuid, theirs);
    text = g_strdup_printf ("the consumer's GPU differs from the producer's "
        "GPU %s", ours);
    client_drop_locked (s, c, CUDAIPC_BYE_DEVICE, text,
        g_strdup_printf ("device mismatch: consumer GPU %s", theirs),
        g_strdup_printf ("Refused consumer '%s' (pid %d): its GPU %s differs "
            "from the producer's GPU %s", c->name, c->pid, theirs, ours));
    g_free (text);
    return;
  }

  /* in effect: what both sides sent */
  c->caps = hello->caps & cudaipc_server_caps (s);
  c->ready = TRUE;
  g_cond_broadcast (&s->cond);
  GST_INFO ("%s: client %u '%s' (pid %d, uid %u) joined", s->name, c->id,
      c->name, c->pid, c->uid);

  if (cudaipc_server_welcome_locked (s, c))
    queue_client_notice (notices, NOTICE_JOINED, c, NULL);
}

static void
client_handle_release_locked (CudaIpcServer * s, Client * c,
    const CudaIpcReleaseMsg * rel)
{
  gint ret;

  ret = s->ring == NULL ? -ENOENT : cudaipc_ring_release (s->ring, &c->lease,
      rel->slot, rel->generation);
  /* an old generation's release is one of the frames it held when that
   * ring was replaced, or it is a lie: a newer generation than ours, or
   * more of them than it held */
  if (ret == -ESTALE && (rel->generation > s->generation ||
          c->stale_allowed == 0))
    ret = -ENOENT;
  switch (ret) {
    case 0:
      c->released++;
      g_cond_broadcast (&s->cond);
      break;
    case -ESTALE:
      c->released++;
      c->stale_allowed--;
      GST_DEBUG ("%s: client %u released slot %u of old generation %u",
          s->name, c->id, rel->slot, rel->generation);
      break;
    default:{
      /* -ERANGE: no such slot; -ENOENT: not held by this client */
      const gchar *what = ret == -ERANGE ? "which does not exist" :
          rel->generation > s->generation ? "a generation not made yet" :
          "which it does not hold";

      client_drop_locked (s, c, CUDAIPC_BYE_PROTOCOL,
          "released a slot it does not hold",
          g_strdup_printf ("protocol error: released slot %u of generation "
              "%u, %s", rel->slot, rel->generation, what),
          g_strdup_printf ("Consumer '%s' (pid %d) released slot %u of "
              "generation %u, %s; disconnected it", c->name, c->pid,
              rel->slot, rel->generation, what));
      break;
    }
  }
}

static void
client_handle_msg_locked (CudaIpcServer * s, Client * c, CudaIpcMsg * msg,
    GPtrArray * notices)
{
  if (!c->ready) {
    if (msg->type == CUDAIPC_MSG_HELLO) {
      client_handle_hello_locked (s, c, &msg->u.hello, notices);
      return;
    }
    if (msg->type == CUDAIPC_MSG_BYE) {
      /* the consumer refused us (version, backend, device): its side
       * reports it; we only log */
      GST_INFO ("%s: client %u (pid %d) refused the handshake: %s", s->name,
          c->id, c->pid, msg->u.bye.text);
      client_drop_locked (s, c, 0, NULL,
          g_strdup_printf ("refused the handshake: %s", msg->u.bye.text), NULL);
      return;
    }
    client_drop_locked (s, c, CUDAIPC_BYE_PROTOCOL, "expected HELLO",
        g_strdup_printf ("protocol error: %s before HELLO",
            cudaipc_msg_type_name (msg->type)),
        g_strdup_printf ("Consumer (pid %d) sent %s before HELLO; "
            "disconnected it", c->pid, cudaipc_msg_type_name (msg->type)));
    return;
  }

  switch (msg->type) {
    case CUDAIPC_MSG_RELEASE:
      client_handle_release_locked (s, c, &msg->u.release);
      break;
    case CUDAIPC_MSG_BYE:
      client_drop_locked (s, c, 0, NULL,
          g_strdup_printf ("said goodbye: %s", msg->u.bye.text), NULL);
      break;
    default:
      client_drop_locked (s, c, CUDAIPC_BYE_PROTOCOL,
          "unexpected message",
          g_strdup_printf ("protocol error: unexpected %s",
              cudaipc_msg_type_name (msg->type)),
          g_strdup_printf ("Consumer '%s' (pid %d) sent an unexpected %s "
              "message; disconnected it", c->name, c->pid,
              cudaipc_msg_type_name (msg->type)));
      break;
  }
}

/* Reads what @c sent, until it would block. */
static void
client_read_locked (CudaIpcServer * s, Client * c, GPtrArray * notices)
{
  for (guint i = 0; i < MAX_MSGS_PER_WAKEUP && !c->dead; i++) {
    CudaIpcMsg msg;
    gint ret;

    ret = cudaipc_conn_recv (c->conn, &msg);
    if (ret == -EAGAIN)
      return;

    if (ret == -EPROTONOSUPPORT && !c->ready) {
      gchar *text = g_strdup_printf ("protocol version %u is not supported, "
          "this producer speaks %u", msg.u.hello.version,
          CUDAIPC_PROTOCOL_VERSION);

      client_drop_locked (s, c, CUDAIPC_BYE_VERSION, text,
          g_strdup_printf ("version mismatch: %s", text),
          g_strdup_printf ("Refused consumer (pid %d): %s", c->pid, text));
      g_free (text);
      return;
    }
    if (ret == -EPIPE) {
      client_drop_locked (s, c, 0, NULL, g_strdup ("connection closed"), NULL);
      return;
    }
    if (ret < 0) {
      client_drop_locked (s, c, CUDAIPC_BYE_PROTOCOL, "malformed message",
          g_strdup_printf ("protocol error: %s", g_strerror (-ret)),
          g_strdup_printf ("Consumer '%s' (pid %d) sent a malformed message "
              "(%s); disconnected it", c->name, c->pid, g_strerror (-ret)));
      return;
    }

    GST_LOG ("%s: client %u: %s", s->name, c->id,
        cudaipc_msg_type_name (msg.type));
    client_handle_msg_locked (s, c, &msg, notices);
    cudaipc_msg_clear (&msg);
  }
}

/* Returns FALSE when accepting must pause: out of fds or memory, the
 * pending connection stays queued and poll() would report it at once. */
static gboolean
accept_clients_locked (CudaIpcServer * s)
{
  for (;;) {
    CudaIpcMsg msg;
    Client *c;
    pid_t pid = 0;
    uid_t uid = (uid_t) - 1;
    gid_t gid = (gid_t) - 1;
    int fd = -1;
    gint ret;

    ret = cudaipc_socket_accept (s->listen_fd, &fd);
    if (ret == -EAGAIN)
      return TRUE;
    if (ret == -ECONNABORTED || ret == -EPROTO)
      continue;
    if (ret < 0) {
      GST_WARNING ("%s: accept failed: %s", s->name, g_strerror (-ret));
      return FALSE;
    }

    c = g_new0 (Client, 1);
    c->id = s->next_client_id++;
    c->conn = cudaipc_conn_new (fd);
    ret = cudaipc_conn_get_peer_cred (c->conn, &pid, &uid, &gid);
    if (ret < 0)
      GST_WARNING ("%s: SO_PEERCRED failed: %s", s->name, g_strerror (-ret));
    c->pid = pid;
    c->uid = uid;
    c->gid = gid;
    c->name = g_strdup_printf ("pid %d", c->pid);
    c->hello_deadline = g_get_monotonic_time () + s->handshake_timeout;
    s->clients = g_list_append (s->clients, c);

    ret = cudaipc_conn_set_nonblocking (c->conn, TRUE);
    if (ret < 0) {
      client_drop_locked (s, c, 0, NULL,
          g_strdup_printf ("fcntl failed: %s", g_strerror (-ret)), NULL);
      continue;
    }

    GST_DEBUG ("%s: client %u connected (pid %d, uid %u)", s->name, c->id,
        c->pid, c->uid);

    cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
    msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
    msg.u.hello.backend = cudaipc_device_get_backend (s->dev);
    cudaipc_device_get_uuid (s->dev, msg.u.hello.uuid);
    msg.u.hello.caps = cudaipc_server_caps (s);
    msg.u.hello.pid = getpid ();
    msg.u.hello.name = s->name;
    cudaipc_server_send_locked (s, c, &msg);
  }
  return TRUE;
}

/* Removes the dead clients, queueing what to tell about them. */
static void
reap_clients_locked (CudaIpcServer * s, GPtrArray * notices)
{
  GList *l = s->clients;

  while (l) {
    GList *next = l->next;
    Client *c = l->data;

    if (c->dead) {
      if (c->warning)
        queue_warning (notices, g_steal_pointer (&c->warning),
            g_strdup_printf ("client %u: %s", c->id, c->reason));
      if (c->ready)
        queue_client_notice (notices, NOTICE_LEFT, c, c->reason);
      s->clients = g_list_delete_link (s->clients, l);
      client_free (c);
    }
    l = next;
  }
}

/* "20 s", or "200 ms" for a time that is not whole seconds. */
static gchar *
format_timeout (gint64 us)
{
  gint64 ms = us / G_TIME_SPAN_MILLISECOND;

  if (ms % 1000 == 0)
    return g_strdup_printf ("%d s", (gint) (ms / 1000));
  return g_strdup_printf ("%d ms", (gint) ms);
}

/* Drops the clients whose HELLO is overdue; returns the poll() time-out
 * (ms, -1: none) until the next one is due, bounded by @timeout. */
static int
expire_handshakes_locked (CudaIpcServer * s, int timeout)
{
  gint64 now = g_get_monotonic_time ();

  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;
    gint64 left;

    if (c->ready || c->dead)
      continue;
    left = c->hello_deadline - now;
    if (left <= 0) {
      g_autofree gchar *limit = format_timeout (s->handshake_timeout);

      /* dead now; freed on the next turn, which the wake-up starts */
      client_drop_locked (s, c, CUDAIPC_BYE_PROTOCOL, "no HELLO in time",
          g_strdup ("no HELLO in time"),
          g_strdup_printf ("Consumer (pid %d) did not complete its "
              "handshake in %s; disconnected it", c->pid, limit));
      continue;
    }
    if (timeout < 0 || (left + 999) / 1000 < timeout)
      timeout = (int) ((left + 999) / 1000);
  }
  return timeout;
}

gpointer
cudaipc_server_io_thread (gpointer data)
{
  CudaIpcServer *s = data;
  GArray *pfds = g_array_new (FALSE, FALSE, sizeof (struct pollfd));
  GPtrArray *pclients = g_ptr_array_new ();
  GPtrArray *notices = g_ptr_array_new_with_free_func (notice_free);
  gint64 accept_paused_until = 0;

  GST_DEBUG ("%s: I/O thread running", s->name);

  for (;;) {
    struct pollfd pfd, *polled;
    int ret, timeout;

    g_mutex_lock (&s->lock);
    reap_clients_locked (s, notices);
    if (s->quit) {
      for (GList * l = s->clients; l; l = l->next)
        client_drop_locked (s, l->data, CUDAIPC_BYE_NORMAL,
            "the producer stopped", g_strdup ("the producer stopped"), NULL);
      reap_clients_locked (s, notices);
      g_mutex_unlock (&s->lock);
      break;
    }

    g_array_set_size (pfds, 0);
    g_ptr_array_set_size (pclients, 0);
    pfd.fd = s->wake_fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    g_array_append_val (pfds, pfd);
    timeout = -1;
    pfd.fd = s->listen_fd;
    if (accept_paused_until > 0) {
      gint64 left = accept_paused_until - g_get_monotonic_time ();

      if (left > 0) {
        pfd.fd = -1;            /* poll() skips it */
        timeout = (int) ((left + 999) / 1000);
      } else {
        accept_paused_until = 0;
      }
    }
    g_array_append_val (pfds, pfd);
    timeout = expire_handshakes_locked (s, timeout);
    /* the clients in the set stay allocated until this thread frees them */
    for (GList * l = s->clients; l; l = l->next) {
      Client *c = l->data;

      if (c->dead)
        continue;
      pfd.fd = cudaipc_conn_get_fd (c->conn);
      g_array_append_val (pfds, pfd);
      g_ptr_array_add (pclients, c);
    }
    g_mutex_unlock (&s->lock);

    give_notices (s, notices);

    do {
      ret = poll ((struct pollfd *) pfds->data, pfds->len, timeout);
    } while (ret < 0 && errno == EINTR);
    if (ret < 0) {
      GST_ERROR ("%s: poll failed: %s", s->name, g_strerror (errno));
      g_usleep (10000);
      continue;
    }

    polled = (struct pollfd *) pfds->data;
    if (polled[0].revents & POLLIN) {
      guint64 count;

      while (read (s->wake_fd, &count, sizeof (count)) < 0 && errno == EINTR);
    }

    g_mutex_lock (&s->lock);
    if (polled[1].revents && !accept_clients_locked (s))
      accept_paused_until = g_get_monotonic_time () + ACCEPT_PAUSE;
    for (guint i = 0; i < pclients->len; i++) {
      Client *c = g_ptr_array_index (pclients, i);

      if (!c->dead && polled[i + 2].revents)
        client_read_locked (s, c, notices);
    }
    g_mutex_unlock (&s->lock);
  }

  give_notices (s, notices);
  g_ptr_array_unref (notices);
  g_ptr_array_unref (pclients);
  g_array_unref (pfds);
  GST_DEBUG ("%s: I/O thread done", s->name);
  return NULL;
}
