/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rogue-producer: a producer that speaks the protocol by hand (host
 * backend) and sends frame metadata that breaks the rules, for the fault
 * tests. Usage:
 *
 *   rogue-producer SOCKET --frames N --mode MODE
 *
 * It takes one consumer: HELLO both ways, a ring of two slots, GRAY8 64x64
 * caps, then N frames, each slot filled with the pattern of its frame
 * number (test-pattern.h, key (n, 0)) and the frame's offset n, so that an
 * ipc-node consumer checks them; then EOS and BYE. Each FRAME carries a
 * good crop (x = n % 8) and then, by MODE:
 *   truncated  an entry whose header names more bytes than there are
 *   deep       a region of interest with a parameter nested 16 deep
 *   many       crops up to the metas' byte limit: more than 1024 metas
 *   names      before each frame, custom events that name 100 names no
 *              process knew each, about a million in 30 frames
 * Prints "rogue-producer frames=N sent=S" and exits 0 once the consumer
 * said BYE or closed; 1 on a failure of its own.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <unistd.h>

#include <gst/gst.h>

#include "wire/connection.h"
#include "device/device.h"
#include "metas/metas.h"
#include "ring/ring.h"
#include "test-pattern.h"
#include "test-wire.h"

#define W 64
#define H 64
#define GEN 1

static gint frames = 30;
static gchar *mode;

static GOptionEntry entries[] = {
  {"frames", 0, 0, G_OPTION_ARG_INT, &frames, "frames to send", "N"},
  {"mode", 0, 0, G_OPTION_ARG_STRING, &mode, "what breaks the rules", "M"},
  {NULL}
};

/* A crop entry (docs/protocol.md, Frame metadata: kind 3). */
static void
put_crop (GByteArray * b, guint32 x)
{
  wire_put16 (b, 3);
  wire_put16 (b, 0);
  wire_put32 (b, 16);
  wire_put32 (b, x);
  wire_put32 (b, 0);
  wire_put32 (b, 16);
  wire_put32 (b, 16);
}

static GByteArray *
blob_for (guint64 n)
{
  GByteArray *b = g_byte_array_new ();

  put_crop (b, (guint32) (n % 8));
  if (g_strcmp0 (mode, "truncated") == 0) {
    wire_put16 (b, 1);
    wire_put16 (b, 0);
    wire_put32 (b, 4000);
  } else if (g_strcmp0 (mode, "deep") == 0) {
    GByteArray *p = g_byte_array_new ();

    /* no type (no names entry: the crop is first), one parameter, id,
     * parent id and the rectangle */
    wire_put16 (p, 0);
    wire_put16 (p, 1);
    for (guint i = 0; i < 6; i++)
      wire_put32 (p, 1);
    /* a parameter as text */
    g_byte_array_append (p, (const guint8 *) "", 1);
    wire_put_str (p, "p, v=(int){{{{{{{{{{{{{{{{1}}}}}}}}}}}}}}}}");
    wire_put16 (b, 1);
    wire_put16 (b, 0);
    wire_put32 (b, p->len);
    g_byte_array_append (b, p->data, p->len);
    g_byte_array_unref (p);
  } else if (g_strcmp0 (mode, "many") == 0) {
    while (b->len + 24 <= CUDAIPC_MAX_META_BYTES)
      put_crop (b, 1);
  }
  return b;
}

static gboolean
send_msg (CudaIpcConn * conn, CudaIpcMsg * msg)
{
  gint ret = cudaipc_conn_send (conn, msg);

  if (ret < 0)
    g_printerr ("rogue-producer: send %s: %s\n",
        cudaipc_msg_type_name (msg->type), g_strerror (-ret));
  return ret == 0;
}

/* Reads until @slot is released (@busy[slot] FALSE), noting the releases
 * of other slots on the way: a consumer may give frames back out of
 * order (one it copied goes back at once); FALSE when the consumer left. */
static gboolean
wait_release (CudaIpcConn * conn, gboolean * busy, guint slot)
{
  while (busy[slot]) {
    CudaIpcMsg msg;

    if (cudaipc_conn_wait (conn, 10000) != 1 ||
        cudaipc_conn_recv (conn, &msg) != 0)
      return FALSE;
    if (msg.type == CUDAIPC_MSG_BYE) {
      cudaipc_msg_clear (&msg);
      return FALSE;
    }
    if (msg.type == CUDAIPC_MSG_RELEASE && msg.u.release.slot < 2)
      busy[msg.u.release.slot] = FALSE;
    cudaipc_msg_clear (&msg);
  }
  return TRUE;
}

/* Custom events before frame @n: 100 new names each, 1,000,000 in all
 * over 30 frames. */
static gboolean
send_names (CudaIpcConn * conn, gint n)
{
  guint per_frame = 1000 * 1000 / 100 / MAX (frames, 1) + 1;

  for (guint e = 0; e < per_frame; e++) {
    GString *s = g_string_new (NULL);
    CudaIpcMsg msg;
    gboolean ok;

    g_string_append_printf (s, "rogue-%d-%d-%u", (int) getpid (), n, e);
    for (guint f = 1; f < 100; f++)
      g_string_append_printf (s, ", rogue-field-%d-%u-%u=(int)%u", n, e, f,
          f);
    cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
    msg.u.event.event_type = GST_EVENT_CUSTOM_DOWNSTREAM;
    msg.u.event.running_time = GST_CLOCK_TIME_NONE;
    msg.u.event.structure = s->str;
    ok = send_msg (conn, &msg);
    g_string_free (s, TRUE);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

static gboolean
run (const gchar * path, guint * sent)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (CudaIpcDevice) dev = NULL;
  g_autoptr (CudaIpcRing) ring = NULL;
  gboolean busy[2] = { FALSE, FALSE };
  CudaIpcConn *conn;
  CudaIpcMsg msg;
  int lfd = -1, fd = -1;
  gboolean ok = FALSE;

  dev = cudaipc_device_new (CUDAIPC_BACKEND_HOST, 0, &err);
  if (dev)
    ring = cudaipc_ring_new (dev, 2, W * H, 0, GEN, &err);
  if (ring == NULL) {
    g_printerr ("rogue-producer: %s\n", err->message);
    return FALSE;
  }
  if (cudaipc_socket_listen (path, 0600, &lfd) < 0 ||
      cudaipc_socket_accept (lfd, &fd) < 0) {
    g_printerr ("rogue-producer: cannot listen on %s\n", path);
    return FALSE;
  }
  conn = cudaipc_conn_new (fd);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.backend = CUDAIPC_BACKEND_HOST;
  msg.u.hello.pid = getpid ();
  msg.u.hello.name = "rogue-producer";
  if (!send_msg (conn, &msg) || cudaipc_conn_wait (conn, 10000) != 1 ||
      cudaipc_conn_recv (conn, &msg) != 0 || msg.type != CUDAIPC_MSG_HELLO)
    goto out;
  cudaipc_msg_clear (&msg);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_RING);
  msg.u.ring.generation = GEN;
  msg.u.ring.n_slots = 2;
  msg.u.ring.slot_size = cudaipc_ring_get_slot_size (ring);
  if (!send_msg (conn, &msg))
    goto out;
  for (guint i = 0; i < 2; i++) {
    const CudaIpcDescriptor *desc =
        cudaipc_block_get_descriptor (cudaipc_ring_get_block (ring, i));

    cudaipc_msg_init (&msg, CUDAIPC_MSG_SLOT);
    msg.u.slot.generation = GEN;
    msg.u.slot.index = i;
    msg.u.slot.size = cudaipc_descriptor_get_size (desc);
    msg.u.slot.n_allocs = cudaipc_descriptor_get_n_fds (desc);
    for (guint j = 0; j < msg.u.slot.n_allocs; j++) {
      msg.u.slot.alloc_sizes[j] = cudaipc_descriptor_get_sizes (desc)[j];
      msg.fds[j] = cudaipc_descriptor_get_fds (desc)[j];
    }
    msg.n_fds = msg.u.slot.n_allocs;
    if (!send_msg (conn, &msg))
      goto out;
  }
  cudaipc_msg_init (&msg, CUDAIPC_MSG_CAPS);
  msg.u.caps.caps_id = 1;
  msg.u.caps.caps = "video/x-raw, format=(string)GRAY8, width=(int)64, "
      "height=(int)64, framerate=(fraction)30/1";
  if (!send_msg (conn, &msg))
    goto out;

  for (gint n = 0; n < frames; n++) {
    guint slot = n % 2;
    CudaIpcBlock *block = cudaipc_ring_get_block (ring, slot);
    guint8 data[W * H];
    GByteArray *blob;

    if (!wait_release (conn, busy, slot))
      break;
    cudaipc_test_fill_pattern (data, sizeof (data), n, 0);
    if (!cudaipc_device_write (dev, cudaipc_block_get_ptr (block), data,
            sizeof (data), &err)) {
      g_printerr ("rogue-producer: %s\n", err->message);
      goto out;
    }
    if (g_strcmp0 (mode, "names") == 0 && !send_names (conn, n))
      goto out;
    blob = blob_for (n);
    cudaipc_msg_init (&msg, CUDAIPC_MSG_FRAME);
    msg.u.frame.generation = GEN;
    msg.u.frame.slot = slot;
    msg.u.frame.seq = n + 1;
    msg.u.frame.caps_id = 1;
    msg.u.frame.pts = n * GST_SECOND / 30;
    msg.u.frame.dts = GST_CLOCK_TIME_NONE;
    msg.u.frame.duration = GST_SECOND / 30;
    msg.u.frame.offset = n;
    msg.u.frame.offset_end = n + 1;
    msg.u.frame.size = sizeof (data);
    msg.u.frame.publish_time = g_get_monotonic_time () * 1000;
    msg.u.frame.clock_time = GST_CLOCK_TIME_NONE;
    msg.u.frame.n_planes = 1;
    msg.u.frame.planes[0].stride = W;
    msg.u.frame.meta = blob->data;
    msg.u.frame.meta_len = blob->len;
    ok = send_msg (conn, &msg);
    g_byte_array_unref (blob);
    if (!ok)
      goto out;
    busy[slot] = TRUE;
    (*sent)++;
  }

  cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
  msg.u.event.event_type = GST_EVENT_EOS;
  msg.u.event.running_time = GST_CLOCK_TIME_NONE;
  msg.u.event.structure = "";
  ok = send_msg (conn, &msg);
  /* until the consumer says BYE or closes */
  while (ok && cudaipc_conn_wait (conn, 10000) == 1 &&
      cudaipc_conn_recv (conn, &msg) == 0) {
    gboolean bye = msg.type == CUDAIPC_MSG_BYE;

    cudaipc_msg_clear (&msg);
    if (bye)
      break;
  }

out:
  cudaipc_conn_free (conn);
  close (lfd);
  cudaipc_socket_unlink (path);
  return ok;
}

int
main (int argc, char **argv)
{
  GOptionContext *ctx = g_option_context_new ("SOCKET");
  GError *err = NULL;
  guint sent = 0;
  gboolean ok;

  gst_init (&argc, &argv);
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &err) || argc != 2) {
    g_printerr ("usage: rogue-producer SOCKET --frames N --mode MODE%s%s\n",
        err ? ": " : "", err ? err->message : "");
    return 2;
  }
  g_option_context_free (ctx);
  ok = run (argv[1], &sent);
  g_print ("rogue-producer frames=%d sent=%u\n", frames, sent);
  return ok ? 0 : 1;
}
