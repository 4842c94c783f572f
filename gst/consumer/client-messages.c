/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the producer's messages mean to the consumer (client.h has the
 * contract): the ring's import table and the caps table, each FRAME
 * checked and wrapped with its way back (the release path, through the
 * session), events parsed, BYE. One message at a time, by whichever
 * thread holds the right to read (client.c). It does no I/O of its own:
 * messages come, and RELEASE and BYE go, through client-io.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>

#include "consumer/client-private.h"
#include "ring/block.h"
#include "ring/descriptor.h"
#include "common/error.h"
#include "common/fdutil.h"
#include "media/media.h"

#define GST_CAT_DEFAULT cudaipc_client_debug

/* CAPS ids kept at once; older ones are forgotten first */
#define MAX_CAPS_ENTRIES 16
/* One frame's way back to the producer. */
typedef struct
{
  Session *session;
  guint64 serial;
  guint32 generation;
  guint32 slot;
  guint64 seq;
} FrameRelease;

/* The producer's caps for one caps id, features removed. */
typedef struct
{
  GstCaps *caps;
  GstVideoInfo info;
} CapsEntry;

/* Called once, from whichever thread freed the frame's memory. */
static void
frame_release (gpointer data)
{
  FrameRelease *r = data;
  Session *s = r->session;

  g_mutex_lock (&s->lock);
  /* a frame of a connection that is gone holds nothing at the producer */
  if (s->conn != NULL && s->serial == r->serial) {
    gint ret;

    if (s->generation == r->generation)
      s->held_mask &= ~(G_GUINT64_CONSTANT (1) << r->slot);
    if (s->held > 0)
      s->held--;
    ret = cudaipc_session_send_release_locked (s, r->generation, r->slot,
        r->seq);
    if (ret < 0)
      GST_DEBUG ("could not send RELEASE of slot %u: %s", r->slot,
          g_strerror (-ret));
  }
  g_mutex_unlock (&s->lock);
}

static void
frame_release_free (gpointer data)
{
  FrameRelease *r = data;

  cudaipc_session_unref (r->session);
  g_free (r);
}

static void
caps_entry_free (gpointer data)
{
  CapsEntry *e = data;

  gst_caps_unref (e->caps);
  g_free (e);
}

GHashTable *
cudaipc_client_caps_table_new (void)
{
  return g_hash_table_new_full (NULL, NULL, NULL, caps_entry_free);
}

/* Life cycle */

static void
drop_imports (CudaIpcClient * client)
{
  /* frames still downstream keep their own references; frames still to
   * be handed out keep what orders them */
  for (guint i = 0; i < G_N_ELEMENTS (client->slots); i++) {
    g_clear_pointer (&client->slots[i], cudaipc_shared_block_unref);
    g_clear_pointer (&client->fences[i], cudaipc_copy_order_unref);
  }
  g_clear_pointer (&client->fence_page, cudaipc_copy_order_unref);
  client->have_ring = FALSE;
  client->n_slots = 0;
}

void
cudaipc_client_close (CudaIpcClient * client, CudaIpcByeReason reason,
    const gchar * text)
{
  Session *s;

  g_return_if_fail (client != NULL);
  s = client->session;
  g_mutex_lock (&s->lock);
  cudaipc_session_hang_up_locked (s, reason, text);
  s->held = 0;
  s->held_mask = 0;
  g_mutex_unlock (&s->lock);
  client->conn = NULL;

  drop_imports (client);
  g_hash_table_remove_all (client->caps);
  client->have_caps_in_use = FALSE;
  client->events = FALSE;
  client->fence = FALSE;
  client->release_page = FALSE;
  g_clear_pointer (&client->producer_name, g_free);
  g_atomic_int_set (&client->peer, 0);
  /* imported blocks hold their own device references */
  g_clear_pointer (&client->dev, cudaipc_device_unref);
}

/* The producer broke the protocol: tell it, drop it, fail. */
CudaIpcClientStatus
cudaipc_client_broken_producer (CudaIpcClient * client, GError ** error,
    const gchar * format, ...)
{
  g_autofree gchar *text = NULL;
  va_list args;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);

  GST_WARNING ("producer on %s: %s", client->path, text);
  g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_PROTOCOL,
      "The producer on %s broke the protocol: %s", client->path, text);
  cudaipc_client_close (client, CUDAIPC_BYE_PROTOCOL, text);
  return CUDAIPC_CLIENT_ERROR;
}

/* Ends the connection on our side with BYE(PROTOCOL) and @text (taken),
 * reported to the element as a connection that closed. */
static CudaIpcClientStatus
end_connection (CudaIpcClient * client, CudaIpcClientItem * item, gchar * text)
{
  GST_WARNING ("producer on %s: %s", client->path, text);
  cudaipc_client_close (client, CUDAIPC_BYE_PROTOCOL, text);
  item->said_bye = FALSE;
  item->bye_reason = CUDAIPC_BYE_PROTOCOL;
  item->bye_text = text;
  return CUDAIPC_CLIENT_CLOSED;
}

/* An interprocess event could not be opened or waited on: tell the
 * producer, close, and let the caller connect again without events. */
CudaIpcClientStatus
cudaipc_client_events_unavailable (CudaIpcClient * client,
    CudaIpcClientItem * item, const gchar * why)
{
  gchar *text = g_strdup_printf ("interprocess CUDA events are unavailable "
      "to this consumer (%s); it reconnects without them", why);

  client->events_failed = TRUE;
  return end_connection (client, item, text);
}

/* A frame whose copy never completed: the connection is given up (the
 * element reconnects or errors, as for a producer that left). */
CudaIpcClientStatus
cudaipc_client_producer_stalled (CudaIpcClient * client,
    CudaIpcClientItem * item, guint slot, const gchar * why)
{
  gchar *text = g_strdup_printf ("the frame in slot %u was never completed "
      "(%s)", slot, why);

  return end_connection (client, item, text);
}

/* Caps */

static CudaIpcClientStatus
handle_caps (CudaIpcClient * client, const CudaIpcCapsMsg * m, GError ** error)
{
  g_autoptr (GError) err = NULL;
  CapsEntry *entry = g_new0 (CapsEntry, 1);

  entry->caps = cudaipc_media_parse_caps (m->caps, &entry->info, &err);
  if (entry->caps == NULL) {
    g_free (entry);
    return cudaipc_client_broken_producer (client, error,
        "CAPS %u are %s: \"%s\"", m->caps_id, err->message, m->caps);
  }

  /* keep the table bounded: forget the oldest id not in use */
  while (g_hash_table_size (client->caps) >= MAX_CAPS_ENTRIES &&
      !g_hash_table_contains (client->caps, GUINT_TO_POINTER (m->caps_id))) {
    GHashTableIter iter;
    gpointer key;
    guint32 oldest = G_MAXUINT32;
    gboolean found = FALSE;

    g_hash_table_iter_init (&iter, client->caps);
    while (g_hash_table_iter_next (&iter, &key, NULL)) {
      guint32 id = GPOINTER_TO_UINT (key);

      if ((!client->have_caps_in_use || id != client->caps_in_use) &&
          id <= oldest) {
        oldest = id;
        found = TRUE;
      }
    }
    if (!found)
      break;
    g_hash_table_remove (client->caps, GUINT_TO_POINTER (oldest));
  }

  GST_DEBUG ("caps %u: %" GST_PTR_FORMAT, m->caps_id, entry->caps);
  g_hash_table_replace (client->caps, GUINT_TO_POINTER (m->caps_id), entry);
  /* redefined: no longer the caps of a frame handed out */
  if (client->have_caps_in_use && client->caps_in_use == m->caps_id)
    client->have_caps_in_use = FALSE;
  return CUDAIPC_CLIENT_OK;
}

/* Ring and slots */

static CudaIpcClientStatus
handle_ring (CudaIpcClient * client, CudaIpcMsg * msg, GError ** error)
{
  const CudaIpcRingMsg *m = &msg->u.ring;
  Session *s = client->session;
  CudaIpcFencePage *page = NULL;

  /* generations only grow on a connection: an old number again would make
   * RELEASEs and held frames of two rings look alike */
  if (client->have_ring && m->generation <= client->generation)
    return cudaipc_client_broken_producer (client, error,
        "RING names generation %u, not " "newer than the current one, %u",
        m->generation, client->generation);

  if ((m->flags & CUDAIPC_RING_HAS_RELEASE_PAGE) && !client->release_page)
    return cudaipc_client_broken_producer (client, error,
        "RING has a release page, which this consumer was not offered");
  if (m->flags & CUDAIPC_RING_HAS_RELEASE_PAGE) {
    g_autoptr (GError) err = NULL;
    /* after the fence page's fd, where there is one */
    guint i = (m->flags & CUDAIPC_RING_HAS_FENCE) ? 1 : 0;
    CudaIpcReleasePage *rp =
        cudaipc_release_page_open (cudaipc_steal_fd (&msg->fds[i]), &err);

    if (rp == NULL)
      return cudaipc_client_broken_producer (client, error, "%s",
          err->message);
    /* the same page with every RING; the newest mapping is kept */
    g_mutex_lock (&s->lock);
    cudaipc_release_page_free (s->page);
    s->page = rp;
    g_mutex_unlock (&s->lock);
  }
  if (m->flags & CUDAIPC_RING_HAS_FENCE) {
    g_autoptr (GError) err = NULL;

    if (!client->fence)
      return cudaipc_client_broken_producer (client, error,
          "RING has a fence page, which " "this consumer was not offered");
    page = cudaipc_fence_page_open (cudaipc_steal_fd (&msg->fds[0]), &err);
    if (page == NULL && g_error_matches (err, CUDAIPC_ERROR,
            CUDAIPC_ERROR_INVALID))
      return cudaipc_client_broken_producer (client, error, "%s", err->message);
    if (page == NULL) {
      g_set_error (error, CUDAIPC_ERROR, err->code, "Could not map the "
          "fence page of the producer on %s: %s", client->path, err->message);
      cudaipc_client_close (client, CUDAIPC_BYE_LOCAL,
          "this consumer could not map the fence page");
      return CUDAIPC_CLIENT_ERROR;
    }
  }

  GST_DEBUG ("ring generation %u: %u slots of %" G_GUINT64_FORMAT " bytes, "
      "%s, %s stream", m->generation, m->n_slots, m->slot_size, page ?
      "with a fence page" : client->fence ? "no fence page: frames are "
      "complete when they come" : "no fence page", (m->flags &
          CUDAIPC_RING_LIVE) ? "a live" : "not a live");
  drop_imports (client);
  client->fence_page = page ? cudaipc_copy_order_new (page, NULL, NULL) : NULL;
  client->have_ring = TRUE;
  client->generation = m->generation;
  client->n_slots = m->n_slots;
  client->slot_size = m->slot_size;
  g_atomic_int_set (&client->producer_live,
      (m->flags & CUDAIPC_RING_LIVE) != 0);

  g_mutex_lock (&s->lock);
  s->generation = m->generation;
  s->held_mask = 0;
  g_mutex_unlock (&s->lock);
  return CUDAIPC_CLIENT_OK;
}

static CudaIpcClientStatus
handle_slot (CudaIpcClient * client, CudaIpcMsg * msg,
    CudaIpcClientItem * item, GError ** error)
{
  const CudaIpcSlotMsg *m = &msg->u.slot;
  g_autoptr (GError) err = NULL;
  CudaIpcDescriptor *desc;
  CudaIpcBlock *block;
  guint n_fds;

  if (!client->have_ring)
    return cudaipc_client_broken_producer (client, error,
        "SLOT %u came before any RING", m->index);
  if (m->generation != client->generation)
    return cudaipc_client_broken_producer (client, error,
        "SLOT %u names ring generation " "%u, the current one is %u", m->index,
        m->generation, client->generation);
  if (m->index >= client->n_slots)
    return cudaipc_client_broken_producer (client, error,
        "SLOT %u is beyond the ring's %u " "slots", m->index, client->n_slots);
  if (client->slots[m->index] != NULL)
    return cudaipc_client_broken_producer (client, error,
        "SLOT %u was announced twice", m->index);

  /* the descriptor takes the fds, whatever its verdict */
  n_fds = msg->n_fds;
  msg->n_fds = 0;
  desc = cudaipc_descriptor_new_from_fds (client->dev, msg->fds,
      m->alloc_sizes, n_fds, m->size, &err);
  if (desc == NULL)
    return cudaipc_client_broken_producer (client, error,
        "the descriptor of slot %u failed " "its checks: %s", m->index,
        err->message);

  block = cudaipc_block_import (client->dev, desc, &err);
  cudaipc_descriptor_free (desc);
  if (block == NULL) {
    g_autofree gchar *text = g_strdup_printf ("this consumer could not "
        "import slot %u: %s", m->index, err->message);

    g_set_error (error, CUDAIPC_ERROR, err->code,
        "Could not import slot %u of the producer on %s: %s", m->index,
        client->path, err->message);
    cudaipc_client_close (client, CUDAIPC_BYE_LOCAL, text);
    return CUDAIPC_CLIENT_ERROR;
  }

  client->slots[m->index] = cudaipc_shared_block_new (block);
  g_mutex_lock (&client->session->lock);
  client->session->imports++;
  g_mutex_unlock (&client->session->lock);
  GST_DEBUG ("imported slot %u: %" G_GUINT64_FORMAT " bytes in %u "
      "allocations", m->index, m->size, n_fds);

  /* without HAS_EVENT (or events) the producer synchronises on the host */
  if ((m->flags & CUDAIPC_SLOT_HAS_EVENT) && client->events) {
    CudaIpcFence *event = cudaipc_fence_open (client->dev, m->event_handle,
        &err);

    if (event == NULL)
      return cudaipc_client_events_unavailable (client, item, err->message);
    client->fences[m->index] =
        cudaipc_copy_order_new (NULL, event, client->dev);
    GST_DEBUG ("opened the interprocess event of slot %u", m->index);
  } else if (m->flags & CUDAIPC_SLOT_HAS_EVENT) {
    GST_DEBUG ("slot %u has an event this consumer did not ask for", m->index);
  }
  return CUDAIPC_CLIENT_OK;
}

/* Frames */

static CudaIpcClientStatus
handle_frame (CudaIpcClient * client, CudaIpcFrameMsg * f,
    CudaIpcClientItem * item, GError ** error)
{
  g_autoptr (GError) err = NULL;
  Session *s = client->session;
  CapsEntry *entry;
  CudaIpcSharedBlock *sb;
  FrameRelease *rel;
  GstMemory *mem;
  guint64 block_size, bit;

  g_mutex_lock (&s->lock);
  s->received++;
  g_mutex_unlock (&s->lock);

  if (!client->have_ring)
    return cudaipc_client_broken_producer (client, error,
        "a FRAME came before any RING");
  if (f->generation != client->generation)
    return cudaipc_client_broken_producer (client, error,
        "a FRAME names ring generation " "%u, the current one is %u",
        f->generation, client->generation);
  if (f->slot >= client->n_slots || (sb = client->slots[f->slot]) == NULL)
    return cudaipc_client_broken_producer (client, error,
        "a FRAME names slot %u, which no " "SLOT announced", f->slot);
  entry = g_hash_table_lookup (client->caps, GUINT_TO_POINTER (f->caps_id));
  if (entry == NULL)
    return cudaipc_client_broken_producer (client, error,
        "a FRAME names caps id %u, which " "no CAPS announced", f->caps_id);
  block_size = cudaipc_block_get_size (cudaipc_shared_block_get_block (sb));
  if (f->size > block_size)
    return cudaipc_client_broken_producer (client, error,
        "a FRAME of %" G_GUINT64_FORMAT " bytes does not fit slot %u of %"
        G_GUINT64_FORMAT " bytes", f->size, f->slot, block_size);
  if (!cudaipc_media_check_layout (f, &entry->info, &err))
    return cudaipc_client_broken_producer (client, error, "%s", err->message);

  bit = G_GUINT64_CONSTANT (1) << f->slot;
  g_mutex_lock (&s->lock);
  if (s->held_mask & bit) {
    g_mutex_unlock (&s->lock);
    return cudaipc_client_broken_producer (client, error,
        "slot %u was published again " "while this consumer still holds it",
        f->slot);
  }
  if (f->size == 0) {
    /* nothing to hand out: give it back at once */
    gint r = cudaipc_session_send_release_locked (s, f->generation,
        f->slot, f->seq);

    g_mutex_unlock (&s->lock);
    if (r < 0)
      GST_DEBUG ("could not send RELEASE: %s", g_strerror (-r));
    GST_LOG ("skipped empty frame %" G_GUINT64_FORMAT " in slot %u", f->seq,
        f->slot);
    return CUDAIPC_CLIENT_OK;
  }
  s->held++;
  s->held_mask |= bit;
  rel = g_new0 (FrameRelease, 1);
  rel->session = cudaipc_session_ref (s);
  rel->serial = s->serial;
  g_mutex_unlock (&s->lock);
  rel->generation = f->generation;
  rel->slot = f->slot;
  rel->seq = f->seq;

  mem = cudaipc_memory_new (sb, 0, f->size, frame_release, rel,
      frame_release_free, &err);
  if (mem == NULL) {
    frame_release (rel);
    frame_release_free (rel);
    g_set_error (error, CUDAIPC_ERROR, err->code,
        "Could not wrap a frame of the producer on %s: %s", client->path,
        err->message);
    cudaipc_client_close (client, CUDAIPC_BYE_LOCAL,
        "this consumer could not wrap a frame");
    return CUDAIPC_CLIENT_ERROR;
  }

  /* the producer's copy into the slot may still be in flight: the frame
   * is waited for when it is handed out (wait_copy()), by its caller's
   * deadline, and not by whoever reads it ahead */
  if (client->fence_page != NULL)
    item->frame.ordering = cudaipc_copy_order_ref (client->fence_page);
  else if (client->fences[f->slot] != NULL)
    item->frame.ordering = cudaipc_copy_order_ref (client->fences[f->slot]);
  item->frame.received_at = g_get_monotonic_time ();
  item->frame.copy_waited = FALSE;

  /* from here, unreffing the memory releases the slot */
  item->type = CUDAIPC_CLIENT_ITEM_FRAME;
  item->frame.msg = *f;
  /* the message's blob goes with it, taken, not copied */
  item->frame.msg.meta = NULL;
  item->frame.msg.meta_len = 0;
  if (f->meta_len > 0) {
    item->frame.meta = g_bytes_new_take ((gpointer) f->meta, f->meta_len);
    f->meta = NULL;
    f->meta_len = 0;
  }
  item->frame.memory = mem;
  item->frame.block = sb;
  item->frame.caps = gst_caps_ref (entry->caps);
  item->frame.info = entry->info;
  item->frame.discont = client->discont;
  client->discont = FALSE;
  client->have_caps_in_use = TRUE;
  client->caps_in_use = f->caps_id;
  return CUDAIPC_CLIENT_OK;
}

/* Events */

static CudaIpcClientStatus
handle_event (CudaIpcClient * client, const CudaIpcEventMsg * m,
    CudaIpcClientItem * item)
{
  g_autoptr (GError) err = NULL;

  GST_DEBUG ("event %s: %s", gst_event_type_get_name (m->event_type),
      m->structure);
  item->event = cudaipc_media_parse_event (m, &err);
  if (item->event == NULL) {
    /* not worth ending the stream for: counted, and said once a
     * connection by whoever takes the refusal */
    GST_WARNING ("ignoring %s", err->message);
    g_mutex_lock (&client->session->lock);
    client->session->events_refused++;
    if (client->session->event_refusal == NULL)
      client->session->event_refusal = g_strdup (err->message);
    g_mutex_unlock (&client->session->lock);
    return CUDAIPC_CLIENT_OK;
  }
  item->type = CUDAIPC_CLIENT_ITEM_EVENT;
  item->running_time = m->running_time;
  return CUDAIPC_CLIENT_OK;
}

/* Receiving */

/* The bytes @msg took on the wire, near enough: what holding what it
 * became costs, for the client's bound on what it reads ahead. */
/* The announce channel: every later message comes through it. Only once,
 * and only where this consumer asked for it. */
static CudaIpcClientStatus
handle_channel (CudaIpcClient * client, CudaIpcMsg * msg, GError ** error)
{
  g_autoptr (GError) err = NULL;
  CudaIpcChannel *ch;

  if (!client->channel || cudaipc_conn_has_rx_channel (client->conn))
    return cudaipc_client_broken_producer (client, error,
        "a CHANNEL this consumer did not ask for");
  ch = cudaipc_channel_open (cudaipc_steal_fd (&msg->fds[0]),
      cudaipc_steal_fd (&msg->fds[1]), msg->u.channel.capacity, &err);
  if (ch == NULL)
    return cudaipc_client_broken_producer (client, error, "its announce "
        "channel: %s", err->message);
  if (!cudaipc_conn_set_rx_channel (client->conn, ch,
          (guint) g_atomic_int_get (&client->spin_us), &err)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "Could not read the announce channel of the producer on %s: %s",
        client->path, err->message);
    cudaipc_client_close (client, CUDAIPC_BYE_LOCAL,
        "this consumer could not wait on its announce channel");
    return CUDAIPC_CLIENT_ERROR;
  }
  GST_INFO ("the producer on %s announces frames through shared memory",
      client->path);
  return CUDAIPC_CLIENT_OK;
}

static guint
msg_bytes (const CudaIpcMsg * msg)
{
  switch (msg->type) {
    case CUDAIPC_MSG_FRAME:
      return CUDAIPC_HEADER_SIZE + 96 + 12 * msg->u.frame.n_planes +
          msg->u.frame.meta_len;
    case CUDAIPC_MSG_EVENT:
      return CUDAIPC_HEADER_SIZE + 17 + strlen (msg->u.event.structure);
    case CUDAIPC_MSG_BYE:
      return CUDAIPC_HEADER_SIZE + 9 + strlen (msg->u.bye.text);
    default:
      return CUDAIPC_HEADER_SIZE;
  }
}

static CudaIpcClientStatus
handle_message (CudaIpcClient * client, CudaIpcMsg * msg,
    CudaIpcClientItem * item, GError ** error)
{
  switch (msg->type) {
    case CUDAIPC_MSG_RING:
      return handle_ring (client, msg, error);
    case CUDAIPC_MSG_SLOT:
      return handle_slot (client, msg, item, error);
    case CUDAIPC_MSG_CAPS:
      return handle_caps (client, &msg->u.caps, error);
    case CUDAIPC_MSG_FRAME:
      return handle_frame (client, &msg->u.frame, item, error);
    case CUDAIPC_MSG_EVENT:
      return handle_event (client, &msg->u.event, item);
    case CUDAIPC_MSG_CHANNEL:
      return handle_channel (client, msg, error);
    case CUDAIPC_MSG_BYE:
      item->said_bye = TRUE;
      item->bye_reason = msg->u.bye.reason;
      item->bye_text = g_strdup (msg->u.bye.text);
      cudaipc_client_close (client, CUDAIPC_BYE_NORMAL, NULL);
      return CUDAIPC_CLIENT_CLOSED;
    default:
      return cudaipc_client_broken_producer (client, error,
          "unexpected %s message", cudaipc_msg_type_name (msg->type));
  }
}

CudaIpcClientStatus
cudaipc_client_read_one (CudaIpcClient * client, gint64 deadline,
    CudaIpcClientItem * item, GError ** error)
{
  CudaIpcClientStatus ret;
  CudaIpcMsg msg;
  guint bytes;
  gint err;

  memset (item, 0, sizeof (*item));
  err = cudaipc_client_recv_msg (client, client->conn, &msg, deadline);
  if (err == -ECANCELED)
    return CUDAIPC_CLIENT_CANCELLED;
  /* -EAGAIN: a wake-up for a record read since (announce channel) */
  if (err == -ETIMEDOUT || err == -EAGAIN)
    return CUDAIPC_CLIENT_OK;
  if (err == -EPIPE) {
    cudaipc_client_close (client, CUDAIPC_BYE_NORMAL, NULL);
    return CUDAIPC_CLIENT_CLOSED;
  }
  if (err < 0 && cudaipc_msg_error_is_peers (err)) {
    const gchar *type = cudaipc_msg_type_name (msg.type);

    cudaipc_msg_clear (&msg);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_PROTOCOL,
        "The producer on %s sent a bad %s message: %s", client->path, type,
        g_strerror (-err));
    cudaipc_client_close (client, CUDAIPC_BYE_PROTOCOL, "bad message");
    return CUDAIPC_CLIENT_ERROR;
  }
  if (err < 0) {
    /* this side's failure (memory, fds, the socket itself) */
    cudaipc_msg_clear (&msg);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "Could not read from the producer on %s: %s", client->path,
        g_strerror (-err));
    cudaipc_client_close (client, CUDAIPC_BYE_LOCAL,
        "this consumer could not read its socket");
    return CUDAIPC_CLIENT_ERROR;
  }

  /* counted before handling: a FRAME's blob is taken from it */
  bytes = msg_bytes (&msg);
  ret = handle_message (client, &msg, item, error);
  item->bytes = bytes;
  cudaipc_msg_clear (&msg);
  return ret;
}

void
cudaipc_client_drop_frame (CudaIpcClient * client, CudaIpcClientItem * item)
{
  Session *s = client->session;

  GST_LOG ("dropped frame %" G_GUINT64_FORMAT " in slot %u: %u held",
      item->frame.msg.seq, item->frame.msg.slot, s->held);
  /* unreffing the memory sends the RELEASE */
  cudaipc_client_item_clear (item);
  g_mutex_lock (&s->lock);
  s->dropped++;
  g_mutex_unlock (&s->lock);
}

guint
cudaipc_client_held (CudaIpcClient * client)
{
  Session *s = client->session;
  guint held;

  g_mutex_lock (&s->lock);
  held = s->held;
  g_mutex_unlock (&s->lock);
  return held;
}

void
cudaipc_client_item_clear (CudaIpcClientItem * item)
{
  if (item == NULL)
    return;
  /* unreffing the memory sends the RELEASE */
  if (item->frame.memory != NULL)
    gst_memory_unref (item->frame.memory);
  gst_clear_caps (&item->frame.caps);
  g_clear_pointer (&item->frame.meta, g_bytes_unref);
  g_clear_pointer (&item->frame.ordering, cudaipc_copy_order_unref);
  gst_clear_event (&item->event);
  g_free (item->bye_text);
  memset (item, 0, sizeof (*item));
}
