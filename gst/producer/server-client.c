/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One consumer as the producer's server sees it: made for an accepted
 * connection, sent our HELLO, the ring, the caps and the events, read for
 * its HELLO, RELEASEs and BYE, dropped when it leaves or misbehaves.
 * server-private.h says who calls what; server.h has the contract.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "producer/server-private.h"

#define GST_CAT_DEFAULT cudaipc_server_debug

/* Messages read from one client per wake-up, so a chatty client cannot
 * starve the others. */
#define MAX_MSGS_PER_WAKEUP 64

/* Most messages read from a dropped client's socket before it is
 * closed. */
#define MAX_DRAIN_MSGS 1024

/* Notices */

void
cudaipc_server_notice_free (gpointer data)
{
  Notice *n = data;

  g_free (n->name);
  g_free (n->text);
  g_free (n->debug);
  g_free (n);
}

void
cudaipc_server_client_queue_notice (GPtrArray * notices, NoticeType type,
    Client * c, const gchar * reason)
{
  Notice *n = g_new0 (Notice, 1);

  n->type = type;
  n->name = g_strdup (c->name);
  n->pid = c->pid;
  n->text = g_strdup (reason);
  g_ptr_array_add (notices, n);
}

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

/* Credentials */

static gboolean
array_has (GArray * a, guint v)
{
  for (guint i = 0; i < a->len; i++)
    if (g_array_index (a, guint, i) == v)
      return TRUE;
  return FALSE;
}

/* Any thread: the policy is constant from new() to free(). */
gboolean
cudaipc_server_peer_allowed (CudaIpcServer * s, guint uid, guint gid)
{
  g_return_val_if_fail (s != NULL, FALSE);

  return uid == 0 || uid == (guint) geteuid () || array_has (s->peer_uids,
      uid) || array_has (s->peer_gids, gid);
}

/* Life cycle */

/* Connections in their handshake, in all and of user @uid. */
static void
count_pending_locked (CudaIpcServer * s, guint uid, guint * all,
    guint * of_user)
{
  *all = *of_user = 0;
  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;

    if (c->ready || c->dead)
      continue;
    (*all)++;
    if (c->uid == uid)
      (*of_user)++;
  }
}

/* A refusal at accept; the warning says how many came since the last
 * one, at most one a second, so that a flood of refused connections does
 * not flood the bus. */
static void
refuse_at_accept_locked (CudaIpcServer * s, Client * c, guint reason,
    gchar * text, GPtrArray * notices)
{
  gint64 now = g_get_monotonic_time ();

  s->refused_unwarned++;
  if (now - s->refused_warned_at >= G_USEC_PER_SEC) {
    Notice *n = g_new0 (Notice, 1);

    n->type = NOTICE_WARNING;
    n->text = g_strdup_printf ("Refused %u connection(s) since the last "
        "warning; the last: pid %d, user %u (group %u): %s",
        s->refused_unwarned, c->pid, c->uid, c->gid, text);
    n->debug = g_strdup_printf ("client %u", c->id);
    g_ptr_array_add (notices, n);
    s->refused_unwarned = 0;
    s->refused_warned_at = now;
  }
  cudaipc_server_client_drop_locked (s, c, reason, text,
      g_strdup_printf ("refused at accept: %s", text), NULL);
  g_free (text);
}

Client *
cudaipc_server_client_new_locked (CudaIpcServer * s, int fd,
    GPtrArray * notices)
{
  guint pending, pending_of_user;
  Client *c = g_new0 (Client, 1);
  gchar *refusal;
  pid_t pid = 0;
  uid_t uid = (uid_t) - 1;
  gid_t gid = (gid_t) - 1;
  CudaIpcMsg msg;
  gint ret;

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
    cudaipc_server_client_drop_locked (s, c, 0, NULL,
        g_strdup_printf ("fcntl failed: %s", g_strerror (-ret)), NULL);
    return c;
  }
  c->nonblocking = TRUE;

  GST_DEBUG ("%s: client %u connected (pid %d, uid %u)", s->name, c->id,
      c->pid, c->uid);

  /* before anything is read from it: who it is, and how many of its kind
   * are still in their handshake */
  if (!cudaipc_server_peer_allowed (s, c->uid, c->gid)) {
    refuse_at_accept_locked (s, c, CUDAIPC_BYE_PERMISSION,
        g_strdup_printf ("user %u (group %u) may not connect to this "
            "producer: its allowed-users or allowed-groups must name this "
            "user or group", c->uid, c->gid), notices);
    return c;
  }
  refusal = cudaipc_server_pinned_refusal_locked (s, c);
  if (refusal != NULL) {
    refuse_at_accept_locked (s, c, CUDAIPC_BYE_PERMISSION, refusal, notices);
    return c;
  }
  count_pending_locked (s, c->uid, &pending, &pending_of_user);
  /* this one counts itself */
  if (pending > s->max_pending || pending_of_user > s->max_pending_per_user) {
    refuse_at_accept_locked (s, c, CUDAIPC_BYE_LOCAL,
        g_strdup_printf ("this producer has too many connections in their "
            "handshake (%u, %u of user %u)", pending - 1,
            pending_of_user - 1, c->uid), notices);
    return c;
  }

  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.backend = cudaipc_device_get_backend (s->dev);
  cudaipc_device_get_uuid (s->dev, msg.u.hello.uuid);
  msg.u.hello.caps = cudaipc_server_caps (s);
  msg.u.hello.pid = getpid ();
  msg.u.hello.name = s->name;
  cudaipc_server_client_send_locked (s, c, &msg);
  return c;
}

void
cudaipc_server_client_free (Client * c)
{
  /* A socket closed with unread messages makes the peer's next read fail
   * with ECONNRESET, ahead of the BYE we sent: so read what it sent (its
   * fds closed with each message) until nothing is left, or enough. Only
   * a non-blocking socket: a blocking read here would wait on the peer. */
  for (guint i = 0; c->conn && c->nonblocking && i < MAX_DRAIN_MSGS; i++) {
    CudaIpcMsg msg;
    gint ret = cudaipc_conn_recv (c->conn, &msg);

    if (ret == 0)
      cudaipc_msg_clear (&msg);
    else if (ret == -EAGAIN || ret == -EPIPE)
      break;
  }
  cudaipc_conn_free (c->conn);
  cudaipc_release_page_free (c->page);
  if (c->stale)
    g_array_unref (c->stale);
  g_free (c->name);
  g_free (c->reason);
  g_free (c->warning);
  g_free (c);
}

void
cudaipc_server_client_drop_locked (CudaIpcServer * s, Client * c,
    guint bye_reason, const gchar * bye_text, gchar * reason, gchar * warning)
{
  if (c->dead) {
    g_free (reason);
    g_free (warning);
    return;
  }

  GST_INFO ("%s: dropping client %u '%s' (pid %d): %s", s->name, c->id,
      c->name, c->pid, reason);

  if (bye_text && c->nonblocking) {
    CudaIpcMsg msg;

    cudaipc_msg_init (&msg, CUDAIPC_MSG_BYE);
    msg.u.bye.reason = bye_reason;
    msg.u.bye.text = bye_text;
    /* best effort: the peer may not be reading or already gone */
    (void) cudaipc_conn_send (c->conn, &msg);
  }

  /* what it gave back through its page is not held any more */
  cudaipc_server_client_collect_locked (s, c);
  c->dead = TRUE;
  c->reason = reason;
  c->warning = warning;
  /* dropped by us for being stuck or too slow while it is still there and
   * holds slots (a stopped process, say): it may still push frames of
   * them, or hold some downstream, which must not change, so the ring is
   * replaced before anything is written again (server.h). Not for a peer
   * that broke the protocol: it forfeits that, and could otherwise make
   * every consumer import a new ring as often as it likes. */
  if (s->ring && bye_text && bye_reason == CUDAIPC_BYE_TOO_SLOW &&
      cudaipc_ring_lease_count (s->ring, &c->lease) > 0) {
    s->retire_ring = TRUE;
    cudaipc_server_pin_locked (s, c);
  }
  if (s->ring) {
    guint n = cudaipc_ring_release_all (s->ring, &c->lease);

    if (n > 0)
      GST_DEBUG ("%s: client %u gave back %u slot(s)", s->name, c->id, n);
  }
  g_cond_broadcast (&s->cond);
  cudaipc_server_wake_io (s);
}

/* Messages to clients */

/* What a send to @c that failed with @ret means: @c is dropped. */
static void
send_failed_locked (CudaIpcServer * s, Client * c, guint32 type, gint ret)
{
  if (ret == -EAGAIN) {
    cudaipc_server_client_drop_locked (s, c, CUDAIPC_BYE_TOO_SLOW,
        "the consumer did not read its messages in time",
        g_strdup ("too slow: its socket buffer is full"),
        g_strdup_printf ("Consumer '%s' (pid %d) is not reading its "
            "messages and was disconnected", c->name, c->pid));
  } else if (ret == -EPIPE) {
    cudaipc_server_client_drop_locked (s, c, 0, NULL,
        g_strdup ("connection closed"), NULL);
  } else {
    cudaipc_server_client_drop_locked (s, c, 0, NULL,
        g_strdup_printf ("sending %s failed: %s",
            cudaipc_msg_type_name (type), g_strerror (-ret)),
        g_strdup_printf ("Could not send %s to consumer '%s' (pid %d): %s",
            cudaipc_msg_type_name (type), c->name, c->pid,
            g_strerror (-ret)));
  }
}

gboolean
cudaipc_server_client_send_locked (CudaIpcServer * s, Client * c,
    const CudaIpcMsg * msg)
{
  gint ret;

  if (c->dead)
    return FALSE;
  ret = cudaipc_conn_send (c->conn, msg);
  if (ret == 0)
    return TRUE;
  send_failed_locked (s, c, msg->type, ret);
  return FALSE;
}

gboolean
cudaipc_server_client_send_built_locked (CudaIpcServer * s, Client * c,
    guint32 type, guint8 * buf, gsize len)
{
  gint ret;

  if (c->dead)
    return FALSE;
  ret = cudaipc_conn_send_built (c->conn, buf, len);
  if (ret == 0)
    return TRUE;
  send_failed_locked (s, c, type, ret);
  return FALSE;
}

guint
cudaipc_server_client_send_to_ready_locked (CudaIpcServer * s,
    const CudaIpcMsg * msg)
{
  guint n = 0;

  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;

    if (client_is_ready (c) && cudaipc_server_client_send_locked (s, c, msg))
      n++;
  }
  return n;
}

gboolean
cudaipc_server_client_send_caps_locked (CudaIpcServer * s, Client * c)
{
  CudaIpcMsg msg;

  if (s->caps_str == NULL)
    return TRUE;
  cudaipc_msg_init (&msg, CUDAIPC_MSG_CAPS);
  msg.u.caps.caps_id = s->caps_id;
  msg.u.caps.caps = s->caps_str;
  return cudaipc_server_client_send_locked (s, c, &msg);
}

/* @c's release page, made with its first RING; where it cannot be made,
 * @c gives frames back with messages (FALSE). */
static gboolean
ensure_page_locked (CudaIpcServer * s, Client * c)
{
  g_autoptr (GError) err = NULL;

  if (c->page)
    return TRUE;
  c->page = cudaipc_release_page_new (&err);
  if (c->page == NULL) {
    GST_WARNING ("%s: client %u gives frames back with messages: %s",
        s->name, c->id, err->message);
    c->caps &= ~CUDAIPC_CAP_RELEASE_PAGE;
    return FALSE;
  }
  if (s->pages_waiting)
    cudaipc_release_page_set_waiting (c->page, TRUE);
  return TRUE;
}

gboolean
cudaipc_server_client_send_ring_locked (CudaIpcServer * s, Client * c)
{
  CudaIpcRing *ring = s->ring;
  CudaIpcMsg msg;
  guint n_slots;

  if (ring == NULL)
    return TRUE;

  n_slots = cudaipc_ring_get_n_slots (ring);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_RING);
  msg.u.ring.generation = cudaipc_ring_get_generation (ring);
  msg.u.ring.n_slots = n_slots;
  msg.u.ring.slot_size = cudaipc_ring_get_slot_size (ring);
  if (s->live)
    msg.u.ring.flags |= CUDAIPC_RING_LIVE;
  if (s->fence_page && (c->caps & CUDAIPC_CAP_FENCE)) {
    msg.u.ring.flags |= CUDAIPC_RING_HAS_FENCE;
    /* borrowed */
    msg.fds[msg.n_fds++] = cudaipc_fence_page_get_fd (s->fence_page);
  }
  if ((c->caps & CUDAIPC_CAP_RELEASE_PAGE) && ensure_page_locked (s, c)) {
    msg.u.ring.flags |= CUDAIPC_RING_HAS_RELEASE_PAGE;
    msg.fds[msg.n_fds++] = cudaipc_release_page_get_fd (c->page);
  }
  if (!cudaipc_server_client_send_locked (s, c, &msg))
    return FALSE;

  for (guint i = 0; i < n_slots; i++) {
    const CudaIpcDescriptor *desc =
        cudaipc_block_get_descriptor (cudaipc_ring_get_block (ring, i));
    guint n_fds = cudaipc_descriptor_get_n_fds (desc);
    const int *fds = cudaipc_descriptor_get_fds (desc);
    const guint64 *sizes = cudaipc_descriptor_get_sizes (desc);

    cudaipc_msg_init (&msg, CUDAIPC_MSG_SLOT);
    msg.u.slot.generation = cudaipc_ring_get_generation (ring);
    msg.u.slot.index = i;
    msg.u.slot.size = cudaipc_descriptor_get_size (desc);
    msg.u.slot.n_allocs = n_fds;
    msg.u.slot.flags = 0;
    if (s->fences[i] && (c->caps & CUDAIPC_CAP_EVENTS)) {
      msg.u.slot.flags |= CUDAIPC_SLOT_HAS_EVENT;
      memcpy (msg.u.slot.event_handle, cudaipc_fence_get_handle (s->fences[i]),
          CUDAIPC_FENCE_HANDLE_SIZE);
    }
    for (guint j = 0; j < n_fds; j++) {
      msg.u.slot.alloc_sizes[j] = sizes[j];
      msg.fds[j] = fds[j];      /* borrowed */
    }
    msg.n_fds = n_fds;
    if (!cudaipc_server_client_send_locked (s, c, &msg))
      return FALSE;
  }

  return cudaipc_server_client_send_caps_locked (s, c);
}

/* The wake the channels of @uid's clients share (wake.h: one datagram
 * wakes them all; a client can disturb only its own user's others). */
static CudaIpcWake *
wake_for_locked (CudaIpcServer * s, guint uid, GError ** error)
{
  CudaIpcWake *w;

  for (GList * l = s->wakes; l; l = l->next) {
    if (cudaipc_wake_get_uid (l->data) == uid)
      return l->data;
  }
  w = cudaipc_wake_new (uid, error);
  if (w)
    s->wakes = g_list_prepend (s->wakes, w);
  return w;
}

void
cudaipc_server_prune_wakes_locked (CudaIpcServer * s)
{
  GList *l = s->wakes;

  while (l) {
    GList *next = l->next;

    /* only ours left: no channel uses it */
    if (cudaipc_wake_get_refcount (l->data) == 1) {
      cudaipc_wake_unref (l->data);
      s->wakes = g_list_delete_link (s->wakes, l);
    }
    l = next;
  }
}

/* The announce channel for a consumer that asked for it: sent on the
 * socket, and every later message goes through it. Where it cannot be
 * made, the messages stay on the socket: the consumer reads either. */
static gboolean
open_channel_locked (CudaIpcServer * s, Client * c)
{
  g_autoptr (GError) err = NULL;
  CudaIpcWake *wake = wake_for_locked (s, c->uid, &err);
  CudaIpcChannel *ch = wake ?
      cudaipc_channel_new (CUDAIPC_CHANNEL_CAPACITY, wake, &err) : NULL;
  CudaIpcMsg msg;

  if (ch == NULL) {
    GST_WARNING ("%s: client %u keeps its messages on the socket: %s",
        s->name, c->id, err->message);
    return TRUE;
  }
  cudaipc_msg_init (&msg, CUDAIPC_MSG_CHANNEL);
  msg.u.channel.capacity = cudaipc_channel_get_capacity (ch);
  msg.fds[0] = cudaipc_channel_get_memfd (ch);
  msg.fds[1] = cudaipc_channel_get_wake_fd (ch);
  msg.n_fds = CUDAIPC_CHANNEL_N_FDS;
  if (!cudaipc_server_client_send_locked (s, c, &msg)) {
    cudaipc_channel_free (ch);
    return FALSE;
  }
  cudaipc_conn_set_tx_channel (c->conn, ch);
  GST_INFO ("%s: client %u reads its messages through shared memory",
      s->name, c->id);
  return TRUE;
}

/* A client that just finished its handshake gets the ring, the caps, the
 * last segment and EOS; FALSE if it was dropped meanwhile. */
static gboolean
welcome_locked (CudaIpcServer * s, Client * c)
{
  CudaIpcMsg msg;

  if ((c->caps & CUDAIPC_CAP_CHANNEL) && !open_channel_locked (s, c))
    return FALSE;
  if (s->ring && !cudaipc_server_client_send_ring_locked (s, c))
    return FALSE;
  if (s->segment_str) {
    cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
    msg.u.event.event_type = GST_EVENT_SEGMENT;
    msg.u.event.running_time = GST_CLOCK_TIME_NONE;
    msg.u.event.structure = s->segment_str;
    if (!cudaipc_server_client_send_locked (s, c, &msg))
      return FALSE;
  }
  if (s->eos) {
    /* or it would wait for frames that will not come */
    cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
    msg.u.event.event_type = GST_EVENT_EOS;
    msg.u.event.running_time = GST_CLOCK_TIME_NONE;
    msg.u.event.structure = "";
    if (!cudaipc_server_client_send_locked (s, c, &msg))
      return FALSE;
  }
  return TRUE;
}

/* Messages from clients */

static void
handle_hello_locked (CudaIpcServer * s, Client * c,
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
   * stream (the producer's HELLO says only who it is). */
  if (!cudaipc_server_peer_allowed (s, c->uid, c->gid)) {
    text = g_strdup_printf ("user %u (group %u) may not connect to this "
        "producer: its allowed-users or allowed-groups must name this user "
        "or group", c->uid, c->gid);
    cudaipc_server_client_drop_locked (s, c, CUDAIPC_BYE_PERMISSION, text,
        g_strdup ("refused by its credentials"),
        g_strdup_printf ("Refused consumer '%s' (pid %d) of user %u (group "
            "%u): add the user to allowed-users or the group to "
            "allowed-groups to let it in", c->name, c->pid, c->uid, c->gid));
    g_free (text);
    return;
  }

  if (hello->backend != (guint32) backend) {
    text = g_strdup_printf ("the consumer uses the %s backend, this producer "
        "uses %s", cudaipc_backend_name (hello->backend),
        cudaipc_backend_name (backend));
    cudaipc_server_client_drop_locked (s, c, CUDAIPC_BYE_BACKEND, text,
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
    cudaipc_server_client_drop_locked (s, c, CUDAIPC_BYE_DEVICE, text,
        g_strdup_printf ("device mismatch: consumer GPU %s", theirs),
        g_strdup_printf ("Refused consumer '%s' (pid %d): its GPU %s differs "
            "from the producer's GPU %s", c->name, c->pid, theirs, ours));
    g_free (text);
    return;
  }

  /* in effect: what both sides sent */
  c->caps = hello->caps & cudaipc_server_caps (s);
  c->ready = TRUE;
  c->last_release = g_get_monotonic_time ();
  g_cond_broadcast (&s->cond);
  GST_INFO ("%s: client %u '%s' (pid %d, uid %u) joined", s->name, c->id,
      c->name, c->pid, c->uid);

  if (welcome_locked (s, c))
    cudaipc_server_client_queue_notice (notices, NOTICE_JOINED, c, NULL);
}

guint
cudaipc_server_client_collect_locked (CudaIpcServer * s, Client * c)
{
  guint32 generation;
  guint64 held;
  guint n = 0;

  if (c->page == NULL || c->dead || s->ring == NULL)
    return 0;
  generation = cudaipc_ring_get_generation (s->ring);
  if (c->lease.generation != generation)
    return 0;
  /* a word frees a hold only where it names the very frame published in
   * that slot: what else a consumer writes there frees nothing */
  for (held = c->lease.held; held != 0; held &= held - 1) {
    guint slot = (guint) __builtin_ctzll (held);

    if (cudaipc_release_page_peek (c->page, slot) == s->published_seq[slot]
        && cudaipc_ring_release (s->ring, &c->lease, slot, generation) == 0)
      n++;
  }
  if (n > 0) {
    c->released += n;
    c->page_released += n;
    c->last_release = g_get_monotonic_time ();
  }
  return n;
}

guint
cudaipc_server_collect_releases_locked (CudaIpcServer * s)
{
  guint n = 0;

  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;

    if (client_is_ready (c))
      n += cudaipc_server_client_collect_locked (s, c);
  }
  return n;
}

void
cudaipc_server_set_pages_waiting_locked (CudaIpcServer * s, gboolean waiting)
{
  if (s->pages_waiting == waiting)
    return;
  s->pages_waiting = waiting;
  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;

    if (c->page && !c->dead)
      cudaipc_release_page_set_waiting (c->page, waiting);
  }
}

void
cudaipc_server_keep_stale_locked (CudaIpcServer * s)
{
  guint n_slots = cudaipc_ring_get_n_slots (s->ring);
  guint32 generation = cudaipc_ring_get_generation (s->ring);

  /* what the pages gave back is no longer held */
  cudaipc_server_collect_releases_locked (s);
  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;

    for (guint slot = 0; slot < n_slots; slot++) {
      StaleFrame f = { generation, slot, s->published_seq[slot] };

      if (!cudaipc_ring_lease_holds (s->ring, &c->lease, slot))
        continue;
      if (c->stale == NULL)
        c->stale = g_array_new (FALSE, FALSE, sizeof (StaleFrame));
      g_array_append_val (c->stale, f);
    }
  }
}

/* Whether @rel names a frame @c held of a replaced ring, which it no
 * longer holds then. */
static gboolean
take_stale (Client * c, const CudaIpcReleaseMsg * rel)
{
  for (guint i = 0; c->stale && i < c->stale->len; i++) {
    StaleFrame *f = &g_array_index (c->stale, StaleFrame, i);

    if (f->generation == rel->generation && f->slot == rel->slot &&
        f->seq == rel->seq) {
      g_array_remove_index_fast (c->stale, i);
      return TRUE;
    }
  }
  return FALSE;
}

/* A RELEASE from a consumer with a release page that only wakes us, for
 * a frame it gave back through the page: taken (TRUE) while it sent fewer
 * of them than frames it gave back so. */
static gboolean
take_wake_up_locked (CudaIpcServer * s, Client * c)
{
  if (c->page == NULL || c->nudges >= c->page_released)
    return FALSE;
  c->nudges++;
  g_cond_broadcast (&s->cond);
  return TRUE;
}

/* A RELEASE of the current ring from a consumer with a release page: it
 * gave the frame back through the page first and found us waiting. TRUE
 * where handled: the page's releases taken, and the frame released where
 * the message names the one it holds in the slot, else counted as a
 * wake-up, no more of which than frames it gave back through the page. */
static gboolean
handle_page_release_locked (CudaIpcServer * s, Client * c,
    const CudaIpcReleaseMsg * rel)
{
  if (c->page == NULL || s->ring == NULL ||
      rel->generation != cudaipc_ring_get_generation (s->ring) ||
      rel->slot >= cudaipc_ring_get_n_slots (s->ring))
    return FALSE;
  cudaipc_server_client_collect_locked (s, c);
  if (cudaipc_ring_lease_holds (s->ring, &c->lease, rel->slot) &&
      rel->seq == s->published_seq[rel->slot])
    return FALSE;
  if (!take_wake_up_locked (s, c))
    cudaipc_server_client_drop_locked (s, c, CUDAIPC_BYE_PROTOCOL,
        "released a frame it does not hold",
        g_strdup_printf ("protocol error: released frame %" G_GUINT64_FORMAT
            " of slot %u, which it does not hold", rel->seq, rel->slot),
        g_strdup_printf ("Consumer '%s' (pid %d) released frame %"
            G_GUINT64_FORMAT " of slot %u, which it does not hold; "
            "disconnected it", c->name, c->pid, rel->seq, rel->slot));
  return TRUE;
}

static void
handle_release_locked (CudaIpcServer * s, Client * c,
    const CudaIpcReleaseMsg * rel)
{
  gint ret;

  if (handle_page_release_locked (s, c, rel))
    return;
  /* an old generation's release is of a frame it held when that ring was
   * replaced; or it only wakes us, for a frame it gave back through the
   * page before it read of the new ring, which we took before replacing
   * the old one; or it is a lie */
  if (rel->generation < s->generation) {
    if (take_stale (c, rel)) {
      c->released++;
      c->last_release = g_get_monotonic_time ();
      GST_DEBUG ("%s: client %u released slot %u of old generation %u",
          s->name, c->id, rel->slot, rel->generation);
      return;
    }
    if (take_wake_up_locked (s, c))
      return;
    ret = -ENOENT;
  } else if (s->ring == NULL) {
    ret = -ENOENT;
  } else {
    ret = cudaipc_ring_release (s->ring, &c->lease, rel->slot,
        rel->generation);
    /* a generation not made yet, or a lease not of this ring */
    if (ret == -ESTALE)
      ret = -ENOENT;
  }
  switch (ret) {
    case 0:
      c->released++;
      c->last_release = g_get_monotonic_time ();
      g_cond_broadcast (&s->cond);
      break;
    default:{
      /* -ERANGE: no such slot; -ENOENT: not held by this client */
      const gchar *what = ret == -ERANGE ? "which does not exist" :
          rel->generation > s->generation ? "a generation not made yet" :
          "which it does not hold";

      cudaipc_server_client_drop_locked (s, c, CUDAIPC_BYE_PROTOCOL,
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
handle_msg_locked (CudaIpcServer * s, Client * c, CudaIpcMsg * msg,
    GPtrArray * notices)
{
  if (!c->ready) {
    if (msg->type == CUDAIPC_MSG_HELLO) {
      handle_hello_locked (s, c, &msg->u.hello, notices);
      return;
    }
    if (msg->type == CUDAIPC_MSG_BYE) {
      /* the consumer refused us (version, backend, device): its side
       * reports it; we only log */
      GST_INFO ("%s: client %u (pid %d) refused the handshake: %s", s->name,
          c->id, c->pid, msg->u.bye.text);
      cudaipc_server_client_drop_locked (s, c, 0, NULL,
          g_strdup_printf ("refused the handshake: %s", msg->u.bye.text), NULL);
      return;
    }
    cudaipc_server_client_drop_locked (s, c, CUDAIPC_BYE_PROTOCOL,
        "expected HELLO", g_strdup_printf ("protocol error: %s before HELLO",
            cudaipc_msg_type_name (msg->type)),
        g_strdup_printf ("Consumer (pid %d) sent %s before HELLO; "
            "disconnected it", c->pid, cudaipc_msg_type_name (msg->type)));
    return;
  }

  switch (msg->type) {
    case CUDAIPC_MSG_RELEASE:
      handle_release_locked (s, c, &msg->u.release);
      break;
    case CUDAIPC_MSG_BYE:
      cudaipc_server_client_drop_locked (s, c, 0, NULL,
          g_strdup_printf ("said goodbye: %s", msg->u.bye.text), NULL);
      break;
    default:
      cudaipc_server_client_drop_locked (s, c, CUDAIPC_BYE_PROTOCOL,
          "unexpected message",
          g_strdup_printf ("protocol error: unexpected %s",
              cudaipc_msg_type_name (msg->type)),
          g_strdup_printf ("Consumer '%s' (pid %d) sent an unexpected %s "
              "message; disconnected it", c->name, c->pid,
              cudaipc_msg_type_name (msg->type)));
      break;
  }
}

void
cudaipc_server_client_read_locked (CudaIpcServer * s, Client * c,
    GPtrArray * notices)
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

      cudaipc_server_client_drop_locked (s, c, CUDAIPC_BYE_VERSION, text,
          g_strdup_printf ("version mismatch: %s", text),
          g_strdup_printf ("Refused consumer (pid %d): %s", c->pid, text));
      g_free (text);
      return;
    }
    if (ret == -EPIPE) {
      cudaipc_server_client_drop_locked (s, c, 0, NULL,
          g_strdup ("connection closed"), NULL);
      return;
    }
    if (ret < 0) {
      cudaipc_server_client_drop_locked (s, c, CUDAIPC_BYE_PROTOCOL,
          "malformed message",
          g_strdup_printf ("protocol error: %s", g_strerror (-ret)),
          g_strdup_printf ("Consumer '%s' (pid %d) sent a malformed message "
              "(%s); disconnected it", c->name, c->pid, g_strerror (-ret)));
      return;
    }

    GST_LOG ("%s: client %u: %s", s->name, c->id,
        cudaipc_msg_type_name (msg.type));
    handle_msg_locked (s, c, &msg, notices);
    cudaipc_msg_clear (&msg);
  }
}
