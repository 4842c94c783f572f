/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The server's I/O thread: polls the listening socket and the clients,
 * accepts connections, has the clients read (server-client.c), drops
 * those whose handshake is overdue, frees the dead and tells the
 * callbacks. server.h has the contract.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "producer/server-private.h"

#define GST_CAT_DEFAULT cudaipc_server_debug

/* How long to stop accepting after accept() failed for want of fds. */
#define ACCEPT_PAUSE (100 * G_TIME_SPAN_MILLISECOND)

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

/* Returns FALSE when accepting must pause: out of fds or memory, the
 * pending connection stays queued and poll() would report it at once. */
static gboolean
accept_clients_locked (CudaIpcServer * s, GPtrArray * notices)
{
  for (;;) {
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
    cudaipc_server_client_new_locked (s, fd, notices);
  }
}

/* Removes the dead clients, queueing what to tell about them. */
static void
reap_clients_locked (CudaIpcServer * s, GPtrArray * notices)
{
  GList *l = s->clients;
  gboolean reaped = FALSE;

  while (l) {
    GList *next = l->next;
    Client *c = l->data;

    if (c->dead) {
      if (c->warning)
        queue_warning (notices, g_steal_pointer (&c->warning),
            g_strdup_printf ("client %u: %s", c->id, c->reason));
      if (c->ready)
        cudaipc_server_client_queue_notice (notices, NOTICE_LEFT, c, c->reason);
      s->clients = g_list_delete_link (s->clients, l);
      cudaipc_server_client_free (c);
      reaped = TRUE;
    }
    l = next;
  }
  if (reaped)
    cudaipc_server_prune_wakes_locked (s);
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
      cudaipc_server_client_drop_locked (s, c, CUDAIPC_BYE_PROTOCOL,
          "no HELLO in time",
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
  GPtrArray *notices =
      g_ptr_array_new_with_free_func (cudaipc_server_notice_free);
  gint64 accept_paused_until = 0;

  GST_DEBUG ("%s: I/O thread running", s->name);

  for (;;) {
    struct pollfd pfd, *polled;
    int ret, timeout;

    g_mutex_lock (&s->lock);
    reap_clients_locked (s, notices);
    if (s->quit) {
      for (GList * l = s->clients; l; l = l->next)
        cudaipc_server_client_drop_locked (s, l->data, CUDAIPC_BYE_NORMAL,
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
    if (polled[1].revents && !accept_clients_locked (s, notices))
      accept_paused_until = g_get_monotonic_time () + ACCEPT_PAUSE;
    for (guint i = 0; i < pclients->len; i++) {
      Client *c = g_ptr_array_index (pclients, i);

      if (!c->dead && polled[i + 2].revents)
        cudaipc_server_client_read_locked (s, c, notices);
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
