/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client's life cycle, waiting, receive() and its background reader,
 * disconnect() (client.h has the contract; client-connect.c connects,
 * client-messages.c says what each message means, client-copy.c waits for
 * the producer's copies, client-io.c carries them, client-settings.c
 * holds the settings and stats).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "consumer/client-private.h"
#include "common/error.h"
#include "common/fdutil.h"

#define GST_CAT_DEFAULT cudaipc_client_debug

/* How long receive() may stay away (its caller busy downstream) before the
 * background reader reads for it: long enough that a pipeline that keeps
 * up never hands a frame between threads, short enough that a slow one
 * keeps releasing what it cannot take, and the producer never waits on
 * it. */
#define READER_DELAY_US (5 * G_TIME_SPAN_MILLISECOND)
/* A frame published this long ago (CLOCK_MONOTONIC, which both ends
 * share) is late: before it is handed out, what is queued behind it is
 * read, for the producer may have dropped this consumer meanwhile (it was
 * stopped, say): then neither it nor anything before the BYE goes out. */
#define LATE_NS (100 * GST_MSECOND)
/* How long the background reader polls before it looks at its state. */
#define READER_POLL_MS 100
/* Most items queued by the background reader or read ahead of a late
 * frame, and most bytes of the messages they came in (frames are bounded
 * by max-held too; these bound a flood of events, of up to 32 KiB each):
 * past either, nothing more is read ahead, and the socket, full, holds
 * the producer back. Reading ahead of a late frame also stops after as
 * many messages, whether they left anything to queue or not. */
#define MAX_PENDING 256
#define MAX_PENDING_BYTES (1024 * 1024)

/* Life cycle */

CudaIpcClient *
cudaipc_client_new (GError ** error)
{
  CudaIpcClient *client;
  int fd;

  cudaipc_debug_init ();

  fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) {
    int e = errno;

    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "Could not create a wake-up eventfd: %s", g_strerror (e));
    return NULL;
  }

  client = g_new0 (CudaIpcClient, 1);
  client->wake_fd = fd;
  client->reader_wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (client->reader_wake_fd < 0) {
    int e = errno;

    cudaipc_close_fd (&client->wake_fd);
    g_free (client);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "Could not create a wake-up eventfd: %s", g_strerror (e));
    return NULL;
  }
  client->peer_access = TRUE;
  client->session = cudaipc_session_new ();
  client->caps = cudaipc_client_caps_table_new ();
  g_mutex_init (&client->reader_lock);
  g_cond_init (&client->reader_cond);
  g_queue_init (&client->pending);
  return client;
}

void
cudaipc_client_free (CudaIpcClient * client)
{
  if (client == NULL)
    return;
  cudaipc_client_disconnect (client, CUDAIPC_BYE_NORMAL, NULL);
  if (client->reader) {
    g_mutex_lock (&client->reader_lock);
    client->reader_quit = TRUE;
    g_cond_broadcast (&client->reader_cond);
    g_mutex_unlock (&client->reader_lock);
    g_thread_join (client->reader);
  }
  cudaipc_close_fd (&client->reader_wake_fd);
  cudaipc_close_fd (&client->wake_fd);
  cudaipc_session_unref (client->session);
  g_hash_table_unref (client->caps);
  g_mutex_clear (&client->reader_lock);
  g_cond_clear (&client->reader_cond);
  g_free (client->producer_name);
  g_free (client->path);
  g_clear_pointer (&client->ready_dev, cudaipc_device_unref);
  g_free (client);
}

void
cudaipc_client_release_device (CudaIpcClient * client)
{
  g_return_if_fail (client != NULL);
  g_clear_pointer (&client->ready_dev, cudaipc_device_unref);
  client->host_producer = FALSE;
}

void
cudaipc_client_cancel (CudaIpcClient * client)
{
  guint64 one = 1;

  g_return_if_fail (client != NULL);
  g_atomic_int_set (&client->cancelled, 1);
  if (write (client->wake_fd, &one, sizeof (one)) < 0)
    GST_DEBUG ("eventfd write: %s", g_strerror (errno));
  /* a receive() waiting for the reader to give back its right */
  g_mutex_lock (&client->reader_lock);
  g_cond_broadcast (&client->reader_cond);
  g_mutex_unlock (&client->reader_lock);
}

void
cudaipc_client_uncancel (CudaIpcClient * client)
{
  guint64 value;

  g_return_if_fail (client != NULL);
  g_atomic_int_set (&client->cancelled, 0);
  /* non-blocking: reads until empty */
  while (read (client->wake_fd, &value, sizeof (value)) > 0) {
  }
}

/* The right to read */

static void
wake_reader (CudaIpcClient * client)
{
  guint64 one = 1;

  if (write (client->reader_wake_fd, &one, sizeof (one)) < 0)
    GST_DEBUG ("eventfd write: %s", g_strerror (errno));
}

/* With the reader lock: waits until nobody reads (asking the background
 * reader to give the right back), then takes it. FALSE where cancel()
 * came first (only when @cancellable) or @deadline (monotonic us; 0:
 * none) passed. */
static gboolean
take_right_locked (CudaIpcClient * client, gboolean cancellable,
    gint64 deadline)
{
  gboolean ok = TRUE;

  client->waiting++;
  while (client->reading) {
    if (cancellable && g_atomic_int_get (&client->cancelled)) {
      ok = FALSE;
      break;
    }
    wake_reader (client);
    if (deadline == 0) {
      g_cond_wait (&client->reader_cond, &client->reader_lock);
    } else if (!g_cond_wait_until (&client->reader_cond, &client->reader_lock,
            deadline) && client->reading) {
      ok = FALSE;
      break;
    }
  }
  client->waiting--;
  if (ok)
    client->reading = TRUE;
  return ok;
}

/* Wakes whoever waits on what changed: a thread waiting for the right,
 * or the background reader where it may read now. Not for every frame: a
 * consumer that keeps up returns to receive() long before the reader may
 * read, and a wake-up each frame cost a context switch each (about half
 * the consumer's CPU at 50,000 frames/s). */
static void
wake_waiters_locked (CudaIpcClient * client)
{
  if (client->waiting > 0 || (client->reader_asleep && !client->in_receive))
    g_cond_broadcast (&client->reader_cond);
}

static void
give_right_locked (CudaIpcClient * client)
{
  client->reading = FALSE;
  wake_waiters_locked (client);
}

/* Whether frames beyond max-held are dropped now. */
static gboolean
leaks (CudaIpcClient * client)
{
  switch (g_atomic_int_get (&client->leaky)) {
    case CUDAIPC_LEAKY_NONE:
      return FALSE;
    case CUDAIPC_LEAKY_DOWNSTREAM:
      return TRUE;
    default:
      return g_atomic_int_get (&client->producer_live) != 0;
  }
}

/* max-held in effect: the setting, the producer's ring less one for
 * CUDAIPC_MAX_HELD_AUTO, G_MAXUINT for no limit (or no dropping) */
static guint
held_limit (CudaIpcClient * client)
{
  gint max_held = g_atomic_int_get (&client->max_held);

  if (!leaks (client))
    return G_MAXUINT;

  if (max_held > 0)
    return (guint) max_held;
  if (max_held == 0)
    return G_MAXUINT;
  return MAX (client->n_slots - 1, 1);
}

static void
pending_free (gpointer data)
{
  Pending *p = data;

  cudaipc_client_item_clear (&p->item);
  g_clear_error (&p->error);
  g_free (p);
}

/* The queue, counted in items and bytes: with the reader lock. */

/* Queues @item (taken) with @status and @error (taken). */
static void
pending_push_locked (CudaIpcClient * client, gboolean at_head,
    CudaIpcClientStatus status, CudaIpcClientItem * item, GError * error)
{
  Pending *p = g_new0 (Pending, 1);

  p->status = status;
  p->item = *item;
  p->error = error;
  p->bytes = item->bytes;
  memset (item, 0, sizeof (*item));
  client->pending_bytes += p->bytes;
  if (at_head)
    g_queue_push_head (&client->pending, p);
  else
    g_queue_push_tail (&client->pending, p);
}

/* Unlinks @l (NULL: the head, if any) and returns its entry. */
static Pending *
pending_take_locked (CudaIpcClient * client, GList * l)
{
  Pending *p;

  if (l == NULL && (l = client->pending.head) == NULL)
    return NULL;
  p = l->data;
  g_queue_delete_link (&client->pending, l);
  client->pending_bytes -= p->bytes;
  return p;
}

static void
pending_clear_locked (CudaIpcClient * client)
{
  g_queue_clear_full (&client->pending, pending_free);
  client->pending_bytes = 0;
}

/* Whether nothing more may be read ahead. */
static gboolean
pending_full_locked (CudaIpcClient * client)
{
  return g_queue_get_length (&client->pending) >= MAX_PENDING ||
      client->pending_bytes >= MAX_PENDING_BYTES;
}

/* With the reader lock, from the background reader: queues what it read.
 * Over max-held, the oldest frame still queued goes first (the frames
 * downstream cannot be taken back); with none queued, the new one. */
static void
queue_pending_locked (CudaIpcClient * client, CudaIpcClientStatus status,
    CudaIpcClientItem * item, GError * error)
{
  Pending *p;

  if (status == CUDAIPC_CLIENT_OK && item->type == CUDAIPC_CLIENT_ITEM_FRAME &&
      cudaipc_client_held (client) > held_limit (client)) {
    GList *l;

    for (l = client->pending.head; l; l = l->next) {
      Pending *old = l->data;

      if (old->status == CUDAIPC_CLIENT_OK &&
          old->item.type == CUDAIPC_CLIENT_ITEM_FRAME)
        break;
    }
    if (l == NULL) {
      cudaipc_client_drop_frame (client, item);
      client->discont = TRUE;
      return;
    }
    p = pending_take_locked (client, l);
    cudaipc_client_drop_frame (client, &p->item);
    pending_free (p);
    /* the frame after a dropped one starts anew */
    item->frame.discont = TRUE;
  }
  pending_push_locked (client, FALSE, status, item, error);
}

/* Whether the background reader may read now; @wait_until: till when to
 * sleep otherwise (0: until woken). */
static gboolean
reader_may_read_locked (CudaIpcClient * client, gint64 * wait_until)
{
  Pending *last = g_queue_peek_tail (&client->pending);

  *wait_until = 0;
  if (client->reading || client->waiting > 0 || client->in_receive ||
      client->conn == NULL || pending_full_locked (client) ||
      (last && last->status != CUDAIPC_CLIENT_OK))
    return FALSE;
  if (g_get_monotonic_time () < client->left_at + READER_DELAY_US) {
    *wait_until = client->left_at + READER_DELAY_US;
    return FALSE;
  }
  return TRUE;
}

/* The background reader: reads for receive()'s caller while that is busy
 * downstream, so that frames beyond max-held go back to the producer at
 * once instead of waiting in the socket (where the producer counts them
 * held). */
static gpointer
reader_thread (gpointer data)
{
  CudaIpcClient *client = data;

  g_mutex_lock (&client->reader_lock);
  while (!client->reader_quit) {
    struct pollfd pfd[2];
    CudaIpcClientItem item;
    CudaIpcClientStatus st = CUDAIPC_CLIENT_OK;
    GError *error = NULL;
    gint64 wait_until;
    guint64 value;
    int n;

    if (!reader_may_read_locked (client, &wait_until)) {
      if (wait_until > 0) {
        g_cond_wait_until (&client->reader_cond, &client->reader_lock,
            wait_until);
      } else {
        client->reader_asleep = TRUE;
        g_cond_wait (&client->reader_cond, &client->reader_lock);
        client->reader_asleep = FALSE;
      }
      continue;
    }
    client->reading = TRUE;
    pfd[0].fd = client->reader_wake_fd;
    pfd[0].events = POLLIN;
    pfd[0].revents = 0;
    pfd[1].fd = cudaipc_conn_get_wait_fd (client->conn);
    pfd[1].events = POLLIN;
    pfd[1].revents = 0;
    g_mutex_unlock (&client->reader_lock);

    memset (&item, 0, sizeof (item));
    /* no busy read here: this thread reads only while the streaming
     * thread is busy downstream, and would take its CPU */
    if (cudaipc_conn_begin_wait (client->conn, FALSE)) {
      n = 1;
      pfd[1].revents = POLLIN;
    } else {
      do {
        n = poll (pfd, 2, READER_POLL_MS);
      } while (n < 0 && errno == EINTR);
      cudaipc_conn_end_wait (client->conn);
    }
    if (n > 0 && (pfd[0].revents & POLLIN)) {
      /* receive() wants the right back */
      while (read (client->reader_wake_fd, &value, sizeof (value)) > 0) {
      }
    } else if (n > 0 && pfd[1].revents) {
      st = cudaipc_client_read_one (client, -1, &item, &error);
    }

    g_mutex_lock (&client->reader_lock);
    if (st != CUDAIPC_CLIENT_OK || item.type != CUDAIPC_CLIENT_ITEM_NONE)
      queue_pending_locked (client, st, &item, error);
    give_right_locked (client);
  }
  g_mutex_unlock (&client->reader_lock);
  return NULL;
}

static gboolean
is_late (const CudaIpcClientItem * item)
{
  gint64 now = g_get_monotonic_time () * 1000;

  return item->type == CUDAIPC_CLIENT_ITEM_FRAME &&
      now - (gint64) item->frame.msg.publish_time > (gint64) LATE_NS;
}

/* With the right to read: queues what is already waiting in the socket,
 * in order, until the connection ends, or the socket is empty, or the
 * queue is full, or MAX_PENDING messages were read: a producer that keeps
 * the socket full is read no further, and the socket holds it back.
 * Returns the messages read. */
static guint
read_ahead (CudaIpcClient * client)
{
  guint n;

  for (n = 0; n < MAX_PENDING; n++) {
    CudaIpcClientItem next;
    CudaIpcClientStatus st;
    GError *error = NULL;
    gboolean full;

    g_mutex_lock (&client->reader_lock);
    full = pending_full_locked (client);
    g_mutex_unlock (&client->reader_lock);
    if (full || client->conn == NULL)
      break;
    if (!cudaipc_conn_pending (client->conn))
      break;
    st = cudaipc_client_read_one (client, -1, &next, &error);
    if (st == CUDAIPC_CLIENT_OK && next.type == CUDAIPC_CLIENT_ITEM_NONE)
      continue;
    g_mutex_lock (&client->reader_lock);
    queue_pending_locked (client, st, &next, error);
    g_mutex_unlock (&client->reader_lock);
    if (st != CUDAIPC_CLIENT_OK) {
      n++;
      break;
    }
  }
  return n;
}

/* With the reader lock, for a late @item: reads what is queued behind it;
 * where the producer's BYE TOO_SLOW is there (it dropped this consumer,
 * and may reuse the slots of every frame it sent), releases @item and
 * every frame queued before that BYE, keeps the rest in order and returns
 * TRUE. A producer that stopped or crashed rewrites nothing: its frames go
 * out as usual. */
static gboolean
discard_late_locked (CudaIpcClient * client, CudaIpcClientItem * item)
{
  GList *l, *end = NULL;
  guint n = 1, read;

  if (!take_right_locked (client, FALSE, 0))
    return FALSE;
  g_mutex_unlock (&client->reader_lock);
  read = read_ahead (client);
  g_mutex_lock (&client->reader_lock);
  give_right_locked (client);
  GST_LOG ("read %u message(s) ahead of a frame published %" G_GINT64_FORMAT
      " ms ago; %u item(s), %" G_GSIZE_FORMAT " bytes queued", read,
      (g_get_monotonic_time () * 1000 -
          (gint64) item->frame.msg.publish_time) / 1000000,
      g_queue_get_length (&client->pending), client->pending_bytes);

  for (l = client->pending.head; l && end == NULL; l = l->next) {
    Pending *p = l->data;

    if (p->status != CUDAIPC_CLIENT_OK) {
      if (p->status == CUDAIPC_CLIENT_CLOSED && p->item.said_bye &&
          p->item.bye_reason == CUDAIPC_BYE_TOO_SLOW)
        end = l;
      else
        return FALSE;
    }
  }
  if (end == NULL)
    return FALSE;

  GST_INFO ("the producer dropped this consumer behind a frame published %"
      G_GINT64_FORMAT " ms ago: that frame and those queued after it are "
      "released unpushed", (g_get_monotonic_time () * 1000 -
          (gint64) item->frame.msg.publish_time) / 1000000);
  cudaipc_client_drop_frame (client, item);
  memset (item, 0, sizeof (*item));
  for (l = client->pending.head; l != end;) {
    Pending *p = l->data;
    GList *next = l->next;

    if (p->item.type == CUDAIPC_CLIENT_ITEM_FRAME) {
      pending_take_locked (client, l);
      cudaipc_client_drop_frame (client, &p->item);
      pending_free (p);
      n++;
    }
    l = next;
  }
  g_mutex_lock (&client->session->lock);
  client->session->discarded += n;
  g_mutex_unlock (&client->session->lock);
  return TRUE;
}

/* With the reader lock and in_receive set: the next item, queued or read,
 * by @deadline (monotonic us; 0: none), else TIMEOUT. */
static CudaIpcClientStatus
receive_locked (CudaIpcClient * client, CudaIpcClientItem * item,
    gint64 deadline, GError ** error)
{
  CudaIpcClientStatus st = CUDAIPC_CLIENT_ERROR;

  memset (item, 0, sizeof (*item));
  for (;;) {
    Pending *p = pending_take_locked (client, NULL);

    if (p != NULL) {
      st = p->status;
      *item = p->item;
      memset (&p->item, 0, sizeof (p->item));
      if (p->error)
        g_propagate_error (error, g_steal_pointer (&p->error));
      pending_free (p);
      break;
    }
    if (g_atomic_int_get (&client->cancelled)) {
      st = CUDAIPC_CLIENT_CANCELLED;
      break;
    }
    if (deadline > 0 && g_get_monotonic_time () >= deadline) {
      st = CUDAIPC_CLIENT_TIMEOUT;
      break;
    }
    if (!take_right_locked (client, TRUE, deadline))
      continue;
    if (!g_queue_is_empty (&client->pending)) {
      /* the background reader queued more while we waited for the right:
       * those go first, in order */
      give_right_locked (client);
      continue;
    }
    if (client->conn == NULL) {
      give_right_locked (client);
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
          "Not connected to a producer");
      st = CUDAIPC_CLIENT_ERROR;
      break;
    }
    g_mutex_unlock (&client->reader_lock);

    st = cudaipc_client_read_one (client, deadline, item, error);
    if (st == CUDAIPC_CLIENT_OK && item->type == CUDAIPC_CLIENT_ITEM_FRAME &&
        cudaipc_client_held (client) > held_limit (client)) {
      /* downstream holds max-held frames already: this one goes back */
      cudaipc_client_drop_frame (client, item);
      client->discont = TRUE;
    }

    g_mutex_lock (&client->reader_lock);
    give_right_locked (client);
    if (st != CUDAIPC_CLIENT_OK || item->type != CUDAIPC_CLIENT_ITEM_NONE)
      break;
    if (deadline > 0 && g_get_monotonic_time () >= deadline) {
      st = CUDAIPC_CLIENT_TIMEOUT;
      break;
    }
  }
  return st;
}

/* With the reader lock, for a frame to hand out: waits for the producer's
 * copy into its slot (cudaipc_client_wait_copy()) by @deadline, with the
 * right to read. A frame whose copy has not landed by then, or when
 * cancel() comes, goes back to the head of the queue for the next call;
 * one whose copy never will ends the connection, and what was queued
 * after it goes with it. */
static CudaIpcClientStatus
wait_copy_locked (CudaIpcClient * client, CudaIpcClientItem * item,
    gint64 deadline, GError ** error)
{
  CudaIpcClientStatus st;

  if (item->frame.ordering == NULL)
    return CUDAIPC_CLIENT_OK;
  if (take_right_locked (client, TRUE, deadline)) {
    g_mutex_unlock (&client->reader_lock);
    st = cudaipc_client_wait_copy (client, item, deadline, error);
    g_mutex_lock (&client->reader_lock);
    give_right_locked (client);
  } else {
    st = g_atomic_int_get (&client->cancelled) ? CUDAIPC_CLIENT_CANCELLED :
        CUDAIPC_CLIENT_TIMEOUT;
  }

  switch (st) {
    case CUDAIPC_CLIENT_TIMEOUT:
    case CUDAIPC_CLIENT_CANCELLED:
      pending_push_locked (client, TRUE, CUDAIPC_CLIENT_OK, item, NULL);
      break;
    case CUDAIPC_CLIENT_CLOSED:
    case CUDAIPC_CLIENT_ERROR:
      /* read behind a frame that cannot go out: the connection is gone */
      pending_clear_locked (client);
      break;
    case CUDAIPC_CLIENT_OK:
      break;
  }
  return st;
}

/* With the reader lock, for @frame just taken from the queue or read:
 * the frames of this connection handed out before it and not released
 * (held, less it and those queued), and the frames dropped since the
 * frame handed out before it. */
static void
stamp_frame_locked (CudaIpcClient * client, CudaIpcClientFrame * frame)
{
  Session *s = client->session;
  guint queued = 0;

  for (GList * l = client->pending.head; l; l = l->next) {
    Pending *p = l->data;

    if (p->status == CUDAIPC_CLIENT_OK &&
        p->item.type == CUDAIPC_CLIENT_ITEM_FRAME)
      queued++;
  }
  g_mutex_lock (&s->lock);
  frame->lent = s->held > queued ? s->held - queued - 1 : 0;
  frame->dropped_before = s->dropped - s->dropped_told;
  s->dropped_told = s->dropped;
  g_mutex_unlock (&s->lock);
}

CudaIpcClientStatus
cudaipc_client_receive (CudaIpcClient * client, CudaIpcClientItem * item,
    GError ** error)
{
  return cudaipc_client_receive_until (client, item, 0, error);
}

CudaIpcClientStatus
cudaipc_client_receive_until (CudaIpcClient * client,
    CudaIpcClientItem * item, gint64 deadline, GError ** error)
{
  CudaIpcClientStatus st;

  g_return_val_if_fail (client != NULL && item != NULL, CUDAIPC_CLIENT_ERROR);

  g_mutex_lock (&client->reader_lock);
  client->in_receive = TRUE;
  for (;;) {
    st = receive_locked (client, item, deadline, error);
    if (st != CUDAIPC_CLIENT_OK || item->type != CUDAIPC_CLIENT_ITEM_FRAME)
      break;
    /* a late frame the producer dropped this consumer behind is not
     * pushed: the next item goes instead */
    if (is_late (item) && discard_late_locked (client, item))
      continue;
    st = wait_copy_locked (client, item, deadline, error);
    if (st == CUDAIPC_CLIENT_OK)
      stamp_frame_locked (client, &item->frame);
    break;
  }
  client->in_receive = FALSE;
  client->left_at = g_get_monotonic_time ();
  if (client->reader == NULL && st == CUDAIPC_CLIENT_OK)
    client->reader = g_thread_new ("cudaipc-reader", reader_thread, client);
  wake_waiters_locked (client);
  g_mutex_unlock (&client->reader_lock);
  return st;
}

void
cudaipc_client_disconnect (CudaIpcClient * client, CudaIpcByeReason reason,
    const gchar * text)
{
  g_return_if_fail (client != NULL);

  g_mutex_lock (&client->reader_lock);
  take_right_locked (client, FALSE, 0);
  g_mutex_unlock (&client->reader_lock);

  cudaipc_client_close (client, reason, text);

  g_mutex_lock (&client->reader_lock);
  /* what was read and not handed out: the releases send nothing now */
  pending_clear_locked (client);
  give_right_locked (client);
  g_mutex_unlock (&client->reader_lock);
}

void
cudaipc_client_peek_policy (CudaIpcClient * client, CudaIpcClientInfo * info)
{
  g_return_if_fail (client != NULL && info != NULL);

  memset (info, 0, sizeof (*info));
  info->live = g_atomic_int_get (&client->producer_live) != 0;
  info->leaky = leaks (client);
}

gboolean
cudaipc_client_get_info (CudaIpcClient * client, CudaIpcClientInfo * info)
{
  g_return_val_if_fail (client != NULL && info != NULL, FALSE);

  memset (info, 0, sizeof (*info));
  /* the reader changes the ring: read it with the right to read */
  g_mutex_lock (&client->reader_lock);
  take_right_locked (client, FALSE, 0);
  g_mutex_unlock (&client->reader_lock);
  if (client->conn == NULL) {
    g_mutex_lock (&client->reader_lock);
    give_right_locked (client);
    g_mutex_unlock (&client->reader_lock);
    return FALSE;
  }
  info->producer_name = client->producer_name;
  info->producer_pid = client->producer_pid;
  info->backend = client->backend;
  info->n_slots = client->n_slots;
  info->slot_size = client->slot_size;
  info->generation = client->generation;
  info->events = client->events && client->fence_page == NULL;
  info->fence = client->fence_page != NULL;
  info->peer = g_atomic_int_get (&client->peer) != 0;
  info->channel = client->conn && cudaipc_conn_has_rx_channel (client->conn);
  info->max_held = held_limit (client);
  info->live = g_atomic_int_get (&client->producer_live) != 0;
  info->leaky = leaks (client);
  g_mutex_lock (&client->reader_lock);
  give_right_locked (client);
  g_mutex_unlock (&client->reader_lock);
  return TRUE;
}
