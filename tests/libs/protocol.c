/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Wire protocol: a round trip of every message type, and every way a
 * datagram can be refused, each with its exact errno; fds handed to a
 * failing parse are closed.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <gst/check/gstcheck.h>

#include "wire/protocol.h"
#include "ring/ring.h"
#include "test-main.h"
#include "test-util.h"

/* Payload offsets (after the 16-byte header) used to patch fields. */
#define HDR_N_FDS 2
#define HDR_LEN 4
#define HDR_SEQ 8
#define HDR_RESERVED 12
#define P(off) (CUDAIPC_HEADER_SIZE + (off))
#define HELLO_VERSION P (0)
#define HELLO_BACKEND P (4)
#define HELLO_CAPS P (24)
#define HELLO_NAME_LEN P (32)
#define RING_N_SLOTS P (4)
#define RING_FLAGS P (16)
#define RING_RESERVED P (20)
#define SLOT_INDEX P (4)
#define SLOT_SIZE P (8)
#define SLOT_N_ALLOCS P (16)
#define SLOT_SIZES P (20)
#define CAPS_LEN P (4)
#define CAPS_STRING P (8)
#define FRAME_SLOT P (4)
#define FRAME_N_PLANES P (88)
#define RELEASE_SLOT P (4)
#define BYE_REASON P (0)

static const CudaIpcMsgType all_types[] = {
  CUDAIPC_MSG_HELLO, CUDAIPC_MSG_RING, CUDAIPC_MSG_SLOT, CUDAIPC_MSG_CAPS,
  CUDAIPC_MSG_FRAME, CUDAIPC_MSG_RELEASE, CUDAIPC_MSG_EVENT, CUDAIPC_MSG_BYE,
  CUDAIPC_MSG_CHANNEL,
};

static guint8 buf[CUDAIPC_MAX_MESSAGE + 64];

static void
assert_fd_closed (int fd)
{
  errno = 0;
  fail_unless_equals_int (fcntl (fd, F_GETFD), -1);
  fail_unless_equals_int (errno, EBADF);
}

/* A message of @type with a distinct value in every field; SLOT gets three
 * allocations and an event handle, FRAME four planes. Its fds are -1
 * placeholders: @n_fds is what the header will say. */
static void
fill_sample (CudaIpcMsg * msg, CudaIpcMsgType type)
{
  cudaipc_msg_init (msg, type);

  switch (type) {
    case CUDAIPC_MSG_HELLO:
      msg->u.hello.version = CUDAIPC_PROTOCOL_VERSION;
      msg->u.hello.backend = CUDAIPC_BACKEND_CUDA;
      for (guint i = 0; i < CUDAIPC_UUID_LEN; i++)
        msg->u.hello.uuid[i] = 0xa0 + i;
      msg->u.hello.caps = CUDAIPC_CAP_EVENTS;
      msg->u.hello.pid = 4242;
      msg->u.hello.name = "cam1 producer";
      break;
    case CUDAIPC_MSG_RING:
      msg->u.ring.generation = 7;
      msg->u.ring.n_slots = 8;
      msg->u.ring.slot_size = G_GUINT64_CONSTANT (6) << 20;
      break;
    case CUDAIPC_MSG_SLOT:
      msg->u.slot.generation = 7;
      msg->u.slot.index = 5;
      msg->u.slot.size = (G_GUINT64_CONSTANT (6) << 20) - 100;
      msg->u.slot.n_allocs = 3;
      msg->u.slot.alloc_sizes[0] = 2 << 20;
      msg->u.slot.alloc_sizes[1] = 2 << 20;
      msg->u.slot.alloc_sizes[2] = 2 << 20;
      msg->u.slot.flags = CUDAIPC_SLOT_HAS_EVENT;
      for (guint i = 0; i < sizeof (msg->u.slot.event_handle); i++)
        msg->u.slot.event_handle[i] = i * 3 + 1;
      msg->n_fds = 3;
      break;
    case CUDAIPC_MSG_CAPS:
      msg->u.caps.caps_id = 3;
      msg->u.caps.caps = "video/x-raw(memory:CUDAMemory), format=(string)NV12";
      break;
    case CUDAIPC_MSG_FRAME:
      msg->u.frame.generation = 7;
      msg->u.frame.slot = 5;
      msg->u.frame.seq = G_GUINT64_CONSTANT (0x1122334455667788);
      msg->u.frame.caps_id = 3;
      msg->u.frame.flags = 0x4040;
      msg->u.frame.pts = 1000000000;
      msg->u.frame.dts = G_MAXUINT64;
      msg->u.frame.duration = 33333333;
      msg->u.frame.offset = 30;
      msg->u.frame.offset_end = 31;
      msg->u.frame.size = 3110400;
      msg->u.frame.publish_time = G_GUINT64_CONSTANT (123456789012345);
      msg->u.frame.clock_time = G_GUINT64_CONSTANT (123456780000000);
      msg->u.frame.n_planes = CUDAIPC_MAX_PLANES;
      for (guint i = 0; i < CUDAIPC_MAX_PLANES; i++) {
        msg->u.frame.planes[i].offset = 1000 * i + 1;
        msg->u.frame.planes[i].stride = 1920 + i;
      }
      break;
    case CUDAIPC_MSG_RELEASE:
      msg->u.release.generation = 7;
      msg->u.release.slot = 63;
      msg->u.release.seq = G_GUINT64_CONSTANT (0x8877665544332211);
      break;
    case CUDAIPC_MSG_EVENT:
      msg->u.event.event_type = GST_EVENT_EOS;
      msg->u.event.running_time = 5000000000;
      msg->u.event.structure = "custom, answer=(int)42";
      break;
    case CUDAIPC_MSG_BYE:
      msg->u.bye.reason = CUDAIPC_BYE_TOO_SLOW;
      msg->u.bye.text = "client held every slot";
      break;
    case CUDAIPC_MSG_CHANNEL:
      msg->u.channel.capacity = 128 * 1024;
      msg->n_fds = CUDAIPC_CHANNEL_N_FDS;
      break;
  }
}

static gsize
build_ok (const CudaIpcMsg * msg, guint32 seq)
{
  gssize len = cudaipc_msg_build (msg, seq, buf, sizeof (buf));

  fail_unless (len >= CUDAIPC_HEADER_SIZE, "build failed: %d", (gint) len);
  return len;
}

static void
assert_msg_equal (const CudaIpcMsg * a, const CudaIpcMsg * b)
{
  fail_unless_equals_int (a->type, b->type);
  fail_unless_equals_int (a->n_fds, b->n_fds);

  switch (a->type) {
    case CUDAIPC_MSG_HELLO:
      fail_unless_equals_int (a->u.hello.version, b->u.hello.version);
      fail_unless_equals_int (a->u.hello.backend, b->u.hello.backend);
      fail_unless (memcmp (a->u.hello.uuid, b->u.hello.uuid,
              CUDAIPC_UUID_LEN) == 0);
      fail_unless_equals_int (a->u.hello.caps, b->u.hello.caps);
      fail_unless_equals_int (a->u.hello.pid, b->u.hello.pid);
      fail_unless_equals_string (a->u.hello.name, b->u.hello.name);
      break;
    case CUDAIPC_MSG_RING:
      fail_unless_equals_int (a->u.ring.generation, b->u.ring.generation);
      fail_unless_equals_int (a->u.ring.n_slots, b->u.ring.n_slots);
      fail_unless_equals_uint64 (a->u.ring.slot_size, b->u.ring.slot_size);
      fail_unless_equals_int (a->u.ring.flags, b->u.ring.flags);
      break;
    case CUDAIPC_MSG_SLOT:
      fail_unless_equals_int (a->u.slot.generation, b->u.slot.generation);
      fail_unless_equals_int (a->u.slot.index, b->u.slot.index);
      fail_unless_equals_uint64 (a->u.slot.size, b->u.slot.size);
      fail_unless_equals_int (a->u.slot.n_allocs, b->u.slot.n_allocs);
      for (guint i = 0; i < a->u.slot.n_allocs; i++)
        fail_unless_equals_uint64 (a->u.slot.alloc_sizes[i],
            b->u.slot.alloc_sizes[i]);
      fail_unless_equals_int (a->u.slot.flags, b->u.slot.flags);
      if (a->u.slot.flags & CUDAIPC_SLOT_HAS_EVENT)
        fail_unless (memcmp (a->u.slot.event_handle, b->u.slot.event_handle,
                sizeof (a->u.slot.event_handle)) == 0);
      break;
    case CUDAIPC_MSG_CAPS:
      fail_unless_equals_int (a->u.caps.caps_id, b->u.caps.caps_id);
      fail_unless_equals_string (a->u.caps.caps, b->u.caps.caps);
      break;
    case CUDAIPC_MSG_FRAME:
      fail_unless_equals_int (a->u.frame.generation, b->u.frame.generation);
      fail_unless_equals_int (a->u.frame.slot, b->u.frame.slot);
      fail_unless_equals_uint64 (a->u.frame.seq, b->u.frame.seq);
      fail_unless_equals_int (a->u.frame.caps_id, b->u.frame.caps_id);
      fail_unless_equals_int (a->u.frame.flags, b->u.frame.flags);
      fail_unless_equals_uint64 (a->u.frame.pts, b->u.frame.pts);
      fail_unless_equals_uint64 (a->u.frame.dts, b->u.frame.dts);
      fail_unless_equals_uint64 (a->u.frame.duration, b->u.frame.duration);
      fail_unless_equals_uint64 (a->u.frame.offset, b->u.frame.offset);
      fail_unless_equals_uint64 (a->u.frame.offset_end, b->u.frame.offset_end);
      fail_unless_equals_uint64 (a->u.frame.size, b->u.frame.size);
      fail_unless_equals_uint64 (a->u.frame.publish_time,
          b->u.frame.publish_time);
      fail_unless_equals_uint64 (a->u.frame.clock_time, b->u.frame.clock_time);
      fail_unless_equals_int (a->u.frame.n_planes, b->u.frame.n_planes);
      fail_unless_equals_int (a->u.frame.meta_len, b->u.frame.meta_len);
      fail_unless (a->u.frame.meta_len == 0 ||
          memcmp (a->u.frame.meta, b->u.frame.meta, a->u.frame.meta_len) == 0);
      for (guint i = 0; i < a->u.frame.n_planes; i++) {
        fail_unless_equals_uint64 (a->u.frame.planes[i].offset,
            b->u.frame.planes[i].offset);
        fail_unless_equals_int (a->u.frame.planes[i].stride,
            b->u.frame.planes[i].stride);
      }
      break;
    case CUDAIPC_MSG_RELEASE:
      fail_unless_equals_int (a->u.release.generation, b->u.release.generation);
      fail_unless_equals_int (a->u.release.slot, b->u.release.slot);
      fail_unless_equals_uint64 (a->u.release.seq, b->u.release.seq);
      break;
    case CUDAIPC_MSG_EVENT:
      fail_unless_equals_int (a->u.event.event_type, b->u.event.event_type);
      fail_unless_equals_uint64 (a->u.event.running_time,
          b->u.event.running_time);
      fail_unless_equals_string (a->u.event.structure, b->u.event.structure);
      break;
    case CUDAIPC_MSG_BYE:
      fail_unless_equals_int (a->u.bye.reason, b->u.bye.reason);
      fail_unless_equals_string (a->u.bye.text, b->u.bye.text);
      break;
    case CUDAIPC_MSG_CHANNEL:
      fail_unless_equals_int (a->u.channel.capacity, b->u.channel.capacity);
      fail_unless_equals_int (a->u.channel.flags, b->u.channel.flags);
      break;
    default:
      fail ("unexpected type %d", a->type);
  }
}

/* Builds @msg, parses it back with real fds when it needs some, compares
 * every field, and checks that the parsed message owns the fds. */
static void
round_trip (const CudaIpcMsg * msg)
{
  int fds[CUDAIPC_MAX_MSG_FDS], orig[CUDAIPC_MAX_MSG_FDS];
  CudaIpcMsg out;
  gsize len;

  len = build_ok (msg, 0xdeadbeef);
  fail_unless_equals_int (GST_READ_UINT16_LE (buf), msg->type);
  fail_unless_equals_int (GST_READ_UINT16_LE (buf + HDR_N_FDS), msg->n_fds);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + HDR_LEN),
      len - CUDAIPC_HEADER_SIZE);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + HDR_RESERVED), 0);

  for (guint i = 0; i < msg->n_fds; i++)
    orig[i] = fds[i] = cudaipc_test_memfd (0, FALSE);

  fail_unless_equals_int (cudaipc_msg_parse (buf, len, fds, msg->n_fds,
          &out), 0);
  fail_unless_equals_int (out.seq, 0xdeadbeef);
  assert_msg_equal (msg, &out);
  for (guint i = 0; i < msg->n_fds; i++) {
    fail_unless_equals_int (out.fds[i], orig[i]);
    fail_unless_equals_int (fds[i], -1);
  }
  for (guint i = msg->n_fds; i < CUDAIPC_MAX_MSG_FDS; i++)
    fail_unless_equals_int (out.fds[i], -1);

  cudaipc_msg_clear (&out);
  for (guint i = 0; i < msg->n_fds; i++)
    assert_fd_closed (orig[i]);
  /* a second clear is harmless */
  cudaipc_msg_clear (&out);
}

/* Parses buf[0..len) with @n_fds fresh fds; expects @expected and checks
 * the fds were closed. */
static void
expect_parse_error (gsize len, guint n_fds, gint expected)
{
  int fds[CUDAIPC_MAX_MSG_FDS + 4], orig[CUDAIPC_MAX_MSG_FDS + 4];
  CudaIpcMsg out;
  gint ret;

  fail_unless (n_fds <= G_N_ELEMENTS (fds));
  for (guint i = 0; i < n_fds; i++)
    orig[i] = fds[i] = cudaipc_test_memfd (0, FALSE);

  ret = cudaipc_msg_parse (buf, len, fds, n_fds, &out);
  fail_unless (ret == expected, "length %" G_GSIZE_FORMAT ", %u fds: "
      "expected %d (%s), got %d (%s)", len, n_fds, expected,
      g_strerror (-expected), ret, g_strerror (-ret));

  for (guint i = 0; i < n_fds; i++) {
    fail_unless_equals_int (fds[i], -1);
    assert_fd_closed (orig[i]);
  }
  /* a failed parse leaves nothing to free, and clearing is safe */
  fail_unless_equals_int (out.n_fds, 0);
  cudaipc_msg_clear (&out);
}

static void
set_payload_len (gsize payload)
{
  GST_WRITE_UINT32_LE (buf + HDR_LEN, payload);
}

GST_START_TEST (test_type_names)
{
  fail_unless_equals_string (cudaipc_msg_type_name (CUDAIPC_MSG_HELLO),
      "HELLO");
  fail_unless_equals_string (cudaipc_msg_type_name (CUDAIPC_MSG_SLOT), "SLOT");
  fail_unless_equals_string (cudaipc_msg_type_name (CUDAIPC_MSG_BYE), "BYE");
  fail_unless_equals_string (cudaipc_msg_type_name (0), "unknown");
  fail_unless_equals_string (cudaipc_msg_type_name (CUDAIPC_MSG_CHANNEL),
      "CHANNEL");
  fail_unless_equals_string (cudaipc_msg_type_name (10), "unknown");
}

GST_END_TEST;

GST_START_TEST (test_init_clear)
{
  CudaIpcMsg msg;

  cudaipc_msg_init (&msg, CUDAIPC_MSG_FRAME);
  fail_unless_equals_int (msg.type, CUDAIPC_MSG_FRAME);
  fail_unless_equals_int (msg.n_fds, 0);
  for (guint i = 0; i < CUDAIPC_MAX_MSG_FDS; i++)
    fail_unless_equals_int (msg.fds[i], -1);
  cudaipc_msg_clear (&msg);
  cudaipc_msg_clear (&msg);
  cudaipc_msg_clear (NULL);
}

GST_END_TEST;

GST_START_TEST (test_round_trip_all)
{
  for (guint t = 0; t < G_N_ELEMENTS (all_types); t++) {
    CudaIpcMsg msg;

    fill_sample (&msg, all_types[t]);
    round_trip (&msg);
  }
}

GST_END_TEST;

GST_START_TEST (test_round_trip_variants)
{
  gchar name[CUDAIPC_MAX_NAME];
  gchar *long_caps;
  CudaIpcMsg msg;

  /* SLOT without an event handle: 64 bytes shorter */
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  fail_unless_equals_int (build_ok (&msg, 1), 16 + 20 + 3 * 8 + 4 + 64);
  msg.u.slot.flags = 0;
  fail_unless_equals_int (build_ok (&msg, 1), 16 + 20 + 3 * 8 + 4);
  round_trip (&msg);

  /* SLOT with one and with the most allocations */
  msg.u.slot.n_allocs = msg.n_fds = 1;
  msg.u.slot.alloc_sizes[0] = msg.u.slot.size;
  round_trip (&msg);
  msg.u.slot.n_allocs = msg.n_fds = CUDAIPC_MAX_ALLOCS;
  for (guint i = 0; i < CUDAIPC_MAX_ALLOCS; i++)
    msg.u.slot.alloc_sizes[i] = 1 << 20;
  msg.u.slot.size = CUDAIPC_MAX_ALLOCS << 20;
  msg.u.slot.index = CUDAIPC_MAX_SLOTS - 1;
  round_trip (&msg);

  /* FRAME with no planes */
  fill_sample (&msg, CUDAIPC_MSG_FRAME);
  msg.u.frame.n_planes = 0;
  fail_unless_equals_int (build_ok (&msg, 1), 16 + 92 + 4);
  round_trip (&msg);
  msg.u.frame.n_planes = 4;
  fail_unless_equals_int (build_ok (&msg, 1), 16 + 92 + 4 * 12 + 4);

  /* FRAME with metadata, up to the limit */
  {
    guint8 *meta = g_malloc (CUDAIPC_MAX_META_BYTES);

    for (guint i = 0; i < CUDAIPC_MAX_META_BYTES; i++)
      meta[i] = (guint8) (i * 7);
    fill_sample (&msg, CUDAIPC_MSG_FRAME);
    msg.u.frame.meta = meta;
    msg.u.frame.meta_len = 100;
    fail_unless_equals_int (build_ok (&msg, 1), 16 + 92 + 4 * 12 + 4 + 100);
    round_trip (&msg);
    msg.u.frame.meta_len = CUDAIPC_MAX_META_BYTES;
    round_trip (&msg);
    g_free (meta);
  }

  /* empty strings, and NULL sent as "" */
  fill_sample (&msg, CUDAIPC_MSG_EVENT);
  msg.u.event.structure = "";
  round_trip (&msg);
  fill_sample (&msg, CUDAIPC_MSG_BYE);
  msg.u.bye.reason = CUDAIPC_BYE_NORMAL;
  msg.u.bye.text = NULL;
  fail_unless_equals_int (build_ok (&msg, 1), 16 + 4 + 4 + 1);
  msg.u.bye.text = "";
  round_trip (&msg);

  /* the longest strings allowed */
  memset (name, 'n', sizeof (name));
  name[CUDAIPC_MAX_NAME - 1] = '\0';
  fill_sample (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.name = name;
  msg.u.hello.backend = CUDAIPC_BACKEND_HOST;
  msg.u.hello.caps = 0;
  round_trip (&msg);

  long_caps = g_malloc (CUDAIPC_MAX_STRING);
  memset (long_caps, 'c', CUDAIPC_MAX_STRING);
  long_caps[CUDAIPC_MAX_STRING - 1] = '\0';
  fill_sample (&msg, CUDAIPC_MSG_CAPS);
  msg.u.caps.caps = long_caps;
  round_trip (&msg);
  g_free (long_caps);

  /* limits that are inclusive */
  fill_sample (&msg, CUDAIPC_MSG_RING);
  msg.u.ring.n_slots = CUDAIPC_MAX_SLOTS;
  msg.u.ring.slot_size = CUDAIPC_MAX_SLOT_SIZE;
  round_trip (&msg);
  msg.u.ring.n_slots = 1;
  msg.u.ring.slot_size = 1;
  round_trip (&msg);
}

GST_END_TEST;

GST_START_TEST (test_layout)
{
  CudaIpcMsg msg;
  gsize len;

  /* the header, byte by byte */
  fill_sample (&msg, CUDAIPC_MSG_RELEASE);
  len = build_ok (&msg, 0x01020304);
  fail_unless_equals_int (len, 32);
  {
    const guint8 expected[] = {
      0x06, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
      0x04, 0x03, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00,
      0x07, 0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x00,
      0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
    };
    fail_unless (memcmp (buf, expected, sizeof (expected)) == 0);
  }

  /* the offsets the rejection tests patch */
  fill_sample (&msg, CUDAIPC_MSG_HELLO);
  build_ok (&msg, 1);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + HELLO_VERSION),
      CUDAIPC_PROTOCOL_VERSION);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + HELLO_BACKEND),
      CUDAIPC_BACKEND_CUDA);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + HELLO_CAPS),
      CUDAIPC_CAP_EVENTS);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + HELLO_NAME_LEN),
      strlen (msg.u.hello.name) + 1);

  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  build_ok (&msg, 1);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + SLOT_INDEX), 5);
  fail_unless_equals_uint64 (GST_READ_UINT64_LE (buf + SLOT_SIZE),
      msg.u.slot.size);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + SLOT_N_ALLOCS), 3);
  fail_unless_equals_uint64 (GST_READ_UINT64_LE (buf + SLOT_SIZES), 2 << 20);

  fill_sample (&msg, CUDAIPC_MSG_FRAME);
  build_ok (&msg, 1);
  fail_unless_equals_uint64 (GST_READ_UINT64_LE (buf + FRAME_N_PLANES - 8),
      msg.u.frame.clock_time);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + FRAME_N_PLANES), 4);
  fail_unless_equals_uint64 (GST_READ_UINT64_LE (buf + FRAME_N_PLANES + 4), 1);
}

GST_END_TEST;

GST_START_TEST (test_build_errors)
{
  gchar *s;
  CudaIpcMsg msg;

  /* every buffer one byte too small, down to nothing */
  for (guint t = 0; t < G_N_ELEMENTS (all_types); t++) {
    gsize len;

    fill_sample (&msg, all_types[t]);
    len = build_ok (&msg, 1);
    for (gsize size = 0; size < len; size++)
      fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, size),
          -EMSGSIZE);
    fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, len), len);
  }
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, NULL, 0), -EMSGSIZE);

  /* counts beyond the arrays */
  fill_sample (&msg, CUDAIPC_MSG_FRAME);
  msg.u.frame.n_planes = CUDAIPC_MAX_PLANES + 1;
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, sizeof (buf)),
      -EMSGSIZE);
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.u.slot.n_allocs = CUDAIPC_MAX_ALLOCS + 1;
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, sizeof (buf)),
      -EMSGSIZE);
  msg.n_fds = CUDAIPC_MAX_MSG_FDS + 1;
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, sizeof (buf)),
      -EMSGSIZE);

  /* an fd count that disagrees with the message */
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.n_fds = 2;
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, sizeof (buf)),
      -EINVAL);
  fill_sample (&msg, CUDAIPC_MSG_HELLO);
  msg.n_fds = 1;
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, sizeof (buf)),
      -EINVAL);

  /* unknown type */
  fill_sample (&msg, CUDAIPC_MSG_RING);
  msg.type = 9;
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, sizeof (buf)),
      -EINVAL);

  /* strings one byte too long */
  s = g_malloc (CUDAIPC_MAX_STRING + 1);
  memset (s, 'x', CUDAIPC_MAX_STRING);
  s[CUDAIPC_MAX_STRING] = '\0';
  fill_sample (&msg, CUDAIPC_MSG_CAPS);
  msg.u.caps.caps = s;
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, sizeof (buf)),
      -EMSGSIZE);
  fill_sample (&msg, CUDAIPC_MSG_EVENT);
  msg.u.event.structure = s;
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, sizeof (buf)),
      -EMSGSIZE);
  fill_sample (&msg, CUDAIPC_MSG_BYE);
  msg.u.bye.text = s;
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, sizeof (buf)),
      -EMSGSIZE);
  s[CUDAIPC_MAX_NAME] = '\0';
  fill_sample (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.name = s;
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, sizeof (buf)),
      -EMSGSIZE);
  g_free (s);
}

GST_END_TEST;

GST_START_TEST (test_truncated)
{
  for (guint t = 0; t < G_N_ELEMENTS (all_types); t++) {
    CudaIpcMsg msg;
    gsize len;

    fill_sample (&msg, all_types[t]);
    len = build_ok (&msg, 1);

    /* a prefix of the datagram: the header disagrees with the length */
    for (gsize l = 0; l < len; l++)
      expect_parse_error (l, msg.n_fds,
          l < CUDAIPC_HEADER_SIZE ? -EBADMSG : -EPROTO);

    /* a header that agrees with a short payload: a field is missing */
    for (gsize l = CUDAIPC_HEADER_SIZE; l < len; l++) {
      build_ok (&msg, 1);
      set_payload_len (l - CUDAIPC_HEADER_SIZE);
      expect_parse_error (l, msg.n_fds, -EBADMSG);
    }
  }
}

GST_END_TEST;

GST_START_TEST (test_header_errors)
{
  CudaIpcMsg msg;
  gsize len;

  fill_sample (&msg, CUDAIPC_MSG_RING);
  len = build_ok (&msg, 1);

  /* unknown types */
  GST_WRITE_UINT16_LE (buf, 0);
  expect_parse_error (len, 0, -EPROTO);
  GST_WRITE_UINT16_LE (buf, CUDAIPC_MSG_TYPE_LAST + 1);
  expect_parse_error (len, 0, -EPROTO);
  GST_WRITE_UINT16_LE (buf, 0xffff);
  expect_parse_error (len, 0, -EPROTO);
  GST_WRITE_UINT16_LE (buf, CUDAIPC_MSG_RING);

  /* reserved bits */
  GST_WRITE_UINT32_LE (buf + HDR_RESERVED, 1);
  expect_parse_error (len, 0, -EPROTO);
  GST_WRITE_UINT32_LE (buf + HDR_RESERVED, 0x80000000);
  expect_parse_error (len, 0, -EPROTO);
  GST_WRITE_UINT32_LE (buf + HDR_RESERVED, 0);

  /* header length that disagrees with the datagram, both ways */
  set_payload_len (len - CUDAIPC_HEADER_SIZE + 1);
  expect_parse_error (len, 0, -EPROTO);
  set_payload_len (len - CUDAIPC_HEADER_SIZE - 1);
  expect_parse_error (len, 0, -EPROTO);
  set_payload_len (0);
  expect_parse_error (len, 0, -EPROTO);
  set_payload_len (len - CUDAIPC_HEADER_SIZE);
  expect_parse_error (len + 1, 0, -EPROTO);

  /* payload beyond the limit, whatever the datagram length */
  set_payload_len (CUDAIPC_MAX_PAYLOAD + 1);
  expect_parse_error (len, 0, -EMSGSIZE);
  set_payload_len (G_MAXUINT32);
  expect_parse_error (len, 0, -EMSGSIZE);
  memset (buf + CUDAIPC_HEADER_SIZE, 0, CUDAIPC_MAX_PAYLOAD + 1);
  set_payload_len (CUDAIPC_MAX_PAYLOAD + 1);
  expect_parse_error (CUDAIPC_HEADER_SIZE + CUDAIPC_MAX_PAYLOAD + 1, 0,
      -EMSGSIZE);

  /* the sequence is the caller's business: any value parses */
  fill_sample (&msg, CUDAIPC_MSG_RING);
  len = build_ok (&msg, 0);
  {
    CudaIpcMsg out;

    fail_unless_equals_int (cudaipc_msg_parse (buf, len, NULL, 0, &out), 0);
    fail_unless_equals_int (out.seq, 0);
    cudaipc_msg_clear (&out);
  }
}

GST_END_TEST;

GST_START_TEST (test_trailing_bytes)
{
  for (guint t = 0; t < G_N_ELEMENTS (all_types); t++) {
    CudaIpcMsg msg;
    gsize len;

    fill_sample (&msg, all_types[t]);
    len = build_ok (&msg, 1);
    buf[len] = 0;
    set_payload_len (len + 1 - CUDAIPC_HEADER_SIZE);
    expect_parse_error (len + 1, msg.n_fds, -EBADMSG);
  }

  /* a SLOT without the event flag followed by an event handle */
  {
    CudaIpcMsg msg;
    gsize len;

    fill_sample (&msg, CUDAIPC_MSG_SLOT);
    len = build_ok (&msg, 1);
    GST_WRITE_UINT32_LE (buf + len - 64 - 4, 0);
    expect_parse_error (len, msg.n_fds, -EBADMSG);
  }
}

GST_END_TEST;

GST_START_TEST (test_version)
{
  CudaIpcMsg msg, out;
  gsize len;

  fill_sample (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION + 1;
  len = build_ok (&msg, 1);
  fail_unless_equals_int (cudaipc_msg_parse (buf, len, NULL, 0, &out),
      -EPROTONOSUPPORT);
  fail_unless_equals_int (out.type, CUDAIPC_MSG_HELLO);
  fail_unless_equals_int (out.u.hello.version, CUDAIPC_PROTOCOL_VERSION + 1);
  fail_unless (out.u.hello.name == NULL);
  cudaipc_msg_clear (&out);

  /* a future HELLO may be laid out differently: only the version counts */
  GST_WRITE_UINT32_LE (buf + HDR_LEN, 4);
  fail_unless_equals_int (cudaipc_msg_parse (buf, CUDAIPC_HEADER_SIZE + 4,
          NULL, 0, &out), -EPROTONOSUPPORT);
  fail_unless_equals_int (out.u.hello.version, CUDAIPC_PROTOCOL_VERSION + 1);
  cudaipc_msg_clear (&out);

  msg.u.hello.version = 0;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 0, -EPROTONOSUPPORT);
}

GST_END_TEST;

GST_START_TEST (test_hello_fields)
{
  CudaIpcMsg msg, out;
  gsize len;

  fill_sample (&msg, CUDAIPC_MSG_HELLO);
  len = build_ok (&msg, 1);
  GST_WRITE_UINT32_LE (buf + HELLO_BACKEND, 2);
  expect_parse_error (len, 0, -EBADMSG);

  /* capability bits we do not know are dropped, not refused */
  msg.u.hello.caps = 0xffffffe0 | CUDAIPC_CAP_EVENTS;
  len = build_ok (&msg, 1);
  fail_unless_equals_int (cudaipc_msg_parse (buf, len, NULL, 0, &out), 0);
  fail_unless_equals_int (out.u.hello.caps, CUDAIPC_CAP_EVENTS);
  cudaipc_msg_clear (&out);
  msg.u.hello.caps = 0x80000000;
  len = build_ok (&msg, 1);
  fail_unless_equals_int (cudaipc_msg_parse (buf, len, NULL, 0, &out), 0);
  fail_unless_equals_int (out.u.hello.caps, 0);
  cudaipc_msg_clear (&out);
  /* both known bits travel */
  msg.u.hello.caps = CUDAIPC_CAP_EVENTS | CUDAIPC_CAP_PEER;
  len = build_ok (&msg, 1);
  fail_unless_equals_int (cudaipc_msg_parse (buf, len, NULL, 0, &out), 0);
  fail_unless_equals_int (out.u.hello.caps,
      CUDAIPC_CAP_EVENTS | CUDAIPC_CAP_PEER);
  cudaipc_msg_clear (&out);
}

GST_END_TEST;

GST_START_TEST (test_fd_count)
{
  CudaIpcMsg msg;
  gsize len;

  /* SLOT with 3 allocations */
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  len = build_ok (&msg, 1);
  /* fewer or more fds than the header says */
  expect_parse_error (len, 2, -EPROTO);
  expect_parse_error (len, 4, -EPROTO);
  expect_parse_error (len, 0, -EPROTO);
  /* the header agrees with the fds, n_allocs does not */
  GST_WRITE_UINT16_LE (buf + HDR_N_FDS, 2);
  expect_parse_error (len, 2, -EPROTO);
  GST_WRITE_UINT16_LE (buf + HDR_N_FDS, 4);
  expect_parse_error (len, 4, -EPROTO);
  /* more fds than any message may carry */
  GST_WRITE_UINT16_LE (buf + HDR_N_FDS, CUDAIPC_MAX_MSG_FDS + 1);
  expect_parse_error (len, CUDAIPC_MAX_MSG_FDS + 1, -EPROTO);

  /* CHANNEL: its two, no fewer, no more */
  fill_sample (&msg, CUDAIPC_MSG_CHANNEL);
  len = build_ok (&msg, 1);
  expect_parse_error (len, 1, -EPROTO);
  expect_parse_error (len, 3, -EPROTO);
  GST_WRITE_UINT16_LE (buf + HDR_N_FDS, 1);
  expect_parse_error (len, 1, -EPROTO);
  GST_WRITE_UINT16_LE (buf + HDR_N_FDS, 3);
  expect_parse_error (len, 3, -EPROTO);

  /* every other type carries none */
  for (guint t = 0; t < G_N_ELEMENTS (all_types); t++) {
    if (all_types[t] == CUDAIPC_MSG_SLOT ||
        all_types[t] == CUDAIPC_MSG_CHANNEL)
      continue;
    fill_sample (&msg, all_types[t]);
    len = build_ok (&msg, 1);
    /* an fd the header does not mention */
    expect_parse_error (len, 1, -EPROTO);
    /* an fd the header mentions */
    GST_WRITE_UINT16_LE (buf + HDR_N_FDS, 1);
    expect_parse_error (len, 1, -EPROTO);
    /* a header that mentions an fd that did not come */
    expect_parse_error (len, 0, -EPROTO);
  }
}

GST_END_TEST;

GST_START_TEST (test_strings)
{
  CudaIpcMsg msg;
  gsize len, slen;

  fill_sample (&msg, CUDAIPC_MSG_CAPS);
  len = build_ok (&msg, 1);
  slen = strlen (msg.u.caps.caps) + 1;

  /* without its NUL */
  buf[CAPS_STRING + slen - 1] = 'x';
  expect_parse_error (len, 0, -EBADMSG);
  /* with a NUL before the end */
  build_ok (&msg, 1);
  buf[CAPS_STRING + 3] = '\0';
  expect_parse_error (len, 0, -EBADMSG);
  /* of length 0 (not even a NUL), the rest now trailing */
  build_ok (&msg, 1);
  GST_WRITE_UINT32_LE (buf + CAPS_LEN, 0);
  expect_parse_error (len, 0, -EBADMSG);
  /* longer than what is left */
  build_ok (&msg, 1);
  GST_WRITE_UINT32_LE (buf + CAPS_LEN, slen + 1);
  expect_parse_error (len, 0, -EBADMSG);

  /* longer than the limit: MAX_STRING + 1 bytes, NUL included */
  len = CAPS_STRING + CUDAIPC_MAX_STRING + 1;
  memset (buf + CAPS_STRING, 'y', CUDAIPC_MAX_STRING);
  buf[len - 1] = '\0';
  GST_WRITE_UINT32_LE (buf + CAPS_LEN, CUDAIPC_MAX_STRING + 1);
  set_payload_len (len - CUDAIPC_HEADER_SIZE);
  expect_parse_error (len, 0, -EMSGSIZE);
  /* a length beyond the limit is refused before anything is read */
  GST_WRITE_UINT32_LE (buf + CAPS_LEN, G_MAXUINT32);
  expect_parse_error (len, 0, -EMSGSIZE);

  /* the name has its own, smaller limit */
  fill_sample (&msg, CUDAIPC_MSG_HELLO);
  build_ok (&msg, 1);
  len = HELLO_NAME_LEN + 4 + CUDAIPC_MAX_NAME + 1;
  memset (buf + HELLO_NAME_LEN + 4, 'n', CUDAIPC_MAX_NAME);
  buf[len - 1] = '\0';
  GST_WRITE_UINT32_LE (buf + HELLO_NAME_LEN, CUDAIPC_MAX_NAME + 1);
  set_payload_len (len - CUDAIPC_HEADER_SIZE);
  expect_parse_error (len, 0, -EMSGSIZE);

  /* the same checks hold in EVENT and BYE */
  fill_sample (&msg, CUDAIPC_MSG_EVENT);
  len = build_ok (&msg, 1);
  buf[len - 1] = 'z';
  expect_parse_error (len, 0, -EBADMSG);
  fill_sample (&msg, CUDAIPC_MSG_BYE);
  len = build_ok (&msg, 1);
  buf[len - 2] = '\0';
  expect_parse_error (len, 0, -EBADMSG);
}

GST_END_TEST;

GST_START_TEST (test_ring_bounds)
{
  CudaIpcMsg msg;
  gsize len;

  fill_sample (&msg, CUDAIPC_MSG_RING);
  msg.u.ring.n_slots = 0;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 0, -EBADMSG);
  msg.u.ring.n_slots = CUDAIPC_MAX_SLOTS + 1;
  len = build_ok (&msg, 1);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + RING_N_SLOTS), 65);
  expect_parse_error (len, 0, -EMSGSIZE);

  fill_sample (&msg, CUDAIPC_MSG_RING);
  msg.u.ring.slot_size = 0;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 0, -EBADMSG);
  msg.u.ring.slot_size = CUDAIPC_MAX_SLOT_SIZE + 1;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 0, -EMSGSIZE);
}

GST_END_TEST;

/* RING's fence page: its flag and its one fd go together. */
GST_START_TEST (test_ring_fence)
{
  CudaIpcMsg msg, out;
  gsize len;

  fill_sample (&msg, CUDAIPC_MSG_RING);
  fail_unless_equals_int (build_ok (&msg, 1), 16 + 24);
  msg.u.ring.flags = CUDAIPC_RING_HAS_FENCE;
  msg.n_fds = 1;
  len = build_ok (&msg, 1);
  fail_unless_equals_int (len, 16 + 24);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + RING_FLAGS), 1);
  fail_unless_equals_int (GST_READ_UINT16_LE (buf + HDR_N_FDS), 1);
  round_trip (&msg);

  /* the flag without its fd, or more fds */
  len = build_ok (&msg, 1);
  GST_WRITE_UINT16_LE (buf + HDR_N_FDS, 0);
  expect_parse_error (len, 0, -EPROTO);
  GST_WRITE_UINT16_LE (buf + HDR_N_FDS, 2);
  expect_parse_error (len, 2, -EPROTO);
  /* an fd without the flag */
  msg.u.ring.flags = 0;
  msg.n_fds = 0;
  len = build_ok (&msg, 1);
  GST_WRITE_UINT16_LE (buf + HDR_N_FDS, 1);
  expect_parse_error (len, 1, -EPROTO);
  /* the builder keeps them together too */
  msg.n_fds = 1;
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, sizeof (buf)),
      -EINVAL);

  /* unknown flags, and the reserved word */
  msg.n_fds = 0;
  len = build_ok (&msg, 1);
  GST_WRITE_UINT32_LE (buf + RING_FLAGS, 8);
  expect_parse_error (len, 0, -EBADMSG);
  /* a release page is one more fd, after the fence page's */
  GST_WRITE_UINT32_LE (buf + RING_FLAGS, CUDAIPC_RING_HAS_RELEASE_PAGE);
  expect_parse_error (len, 0, -EPROTO);
  GST_WRITE_UINT32_LE (buf + RING_FLAGS, CUDAIPC_RING_HAS_RELEASE_PAGE |
      CUDAIPC_RING_HAS_FENCE);
  expect_parse_error (len, 1, -EPROTO);
  /* LIVE is known */
  len = build_ok (&msg, 1);
  GST_WRITE_UINT32_LE (buf + RING_FLAGS, CUDAIPC_RING_LIVE);
  fail_unless_equals_int (cudaipc_msg_parse (buf, len, NULL, 0, &out), 0);
  fail_unless_equals_int (out.u.ring.flags, CUDAIPC_RING_LIVE);
  cudaipc_msg_clear (&out);
  len = build_ok (&msg, 1);
  GST_WRITE_UINT32_LE (buf + RING_RESERVED, 1);
  expect_parse_error (len, 0, -EBADMSG);
}

GST_END_TEST;

/* Writes a SLOT by hand: @n_allocs sizes of 1 MiB, header with @hdr_fds. */
static gsize
write_raw_slot (guint32 n_allocs, guint16 hdr_fds)
{
  gsize pos = CUDAIPC_HEADER_SIZE;

  GST_WRITE_UINT16_LE (buf, CUDAIPC_MSG_SLOT);
  GST_WRITE_UINT16_LE (buf + HDR_N_FDS, hdr_fds);
  GST_WRITE_UINT32_LE (buf + HDR_SEQ, 1);
  GST_WRITE_UINT32_LE (buf + HDR_RESERVED, 0);
  GST_WRITE_UINT32_LE (buf + pos, 1);   /* generation */
  GST_WRITE_UINT32_LE (buf + pos + 4, 0);       /* index */
  GST_WRITE_UINT64_LE (buf + pos + 8, 1 << 20); /* size */
  GST_WRITE_UINT32_LE (buf + pos + 16, n_allocs);
  pos += 20;
  for (guint i = 0; i < n_allocs; i++, pos += 8)
    GST_WRITE_UINT64_LE (buf + pos, 1 << 20);
  GST_WRITE_UINT32_LE (buf + pos, 0);   /* flags */
  pos += 4;
  set_payload_len (pos - CUDAIPC_HEADER_SIZE);
  return pos;
}

GST_START_TEST (test_slot_bounds)
{
  CudaIpcMsg msg;
  gsize len;

  /* the hand-written form parses when the values are good */
  len = write_raw_slot (2, 2);
  {
    int fds[2] =
        { cudaipc_test_memfd (0, FALSE), cudaipc_test_memfd (0, FALSE) };
    CudaIpcMsg out;

    fail_unless_equals_int (cudaipc_msg_parse (buf, len, fds, 2, &out), 0);
    fail_unless_equals_int (out.u.slot.n_allocs, 2);
    cudaipc_msg_clear (&out);
  }

  /* n_allocs 0 and 17 */
  len = write_raw_slot (0, 0);
  expect_parse_error (len, 0, -EBADMSG);
  len = write_raw_slot (CUDAIPC_MAX_ALLOCS + 1, 0);
  expect_parse_error (len, 0, -EMSGSIZE);
  len = write_raw_slot (CUDAIPC_MAX_ALLOCS + 1, CUDAIPC_MAX_ALLOCS + 1);
  expect_parse_error (len, CUDAIPC_MAX_ALLOCS + 1, -EPROTO);
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.u.slot.n_allocs = msg.n_fds = 0;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 0, -EBADMSG);

  /* index 64 */
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.u.slot.index = CUDAIPC_MAX_SLOTS;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 3, -EBADMSG);

  /* unknown flags */
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.u.slot.flags = CUDAIPC_SLOT_HAS_EVENT | 2;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 3, -EBADMSG);
  msg.u.slot.flags = 0x80000000;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 3, -EBADMSG);

  /* sizes: zero, beyond 4 GiB, larger than the allocations */
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.u.slot.size = 0;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 3, -EBADMSG);
  msg.u.slot.size = (6 << 20) + 1;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 3, -EBADMSG);
  msg.u.slot.size = CUDAIPC_MAX_SLOT_SIZE + 1;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 3, -EMSGSIZE);
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.u.slot.alloc_sizes[1] = 0;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 3, -EBADMSG);
  msg.u.slot.alloc_sizes[1] = CUDAIPC_MAX_SLOT_SIZE + 1;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 3, -EMSGSIZE);
  /* each fine, the sum too large */
  msg.u.slot.alloc_sizes[1] = CUDAIPC_MAX_SLOT_SIZE;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 3, -EMSGSIZE);
}

GST_END_TEST;

GST_START_TEST (test_frame_bounds)
{
  CudaIpcMsg msg;
  gsize len;

  /* five planes, written by hand after four real ones */
  fill_sample (&msg, CUDAIPC_MSG_FRAME);
  len = build_ok (&msg, 1);
  GST_WRITE_UINT32_LE (buf + FRAME_N_PLANES, CUDAIPC_MAX_PLANES + 1);
  GST_WRITE_UINT64_LE (buf + len, 5000);
  GST_WRITE_UINT32_LE (buf + len + 8, 1920);
  len += 12;
  set_payload_len (len - CUDAIPC_HEADER_SIZE);
  expect_parse_error (len, 0, -EMSGSIZE);
  GST_WRITE_UINT32_LE (buf + FRAME_N_PLANES, G_MAXUINT32);
  expect_parse_error (len, 0, -EMSGSIZE);

  /* more planes announced than present */
  fill_sample (&msg, CUDAIPC_MSG_FRAME);
  msg.u.frame.n_planes = 2;
  len = build_ok (&msg, 1);
  GST_WRITE_UINT32_LE (buf + FRAME_N_PLANES, 3);
  expect_parse_error (len, 0, -EBADMSG);

  /* slot index 64, size and plane offset beyond 4 GiB */
  fill_sample (&msg, CUDAIPC_MSG_FRAME);
  msg.u.frame.slot = CUDAIPC_MAX_SLOTS;
  len = build_ok (&msg, 1);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + FRAME_SLOT), 64);
  expect_parse_error (len, 0, -EBADMSG);
  fill_sample (&msg, CUDAIPC_MSG_FRAME);
  msg.u.frame.size = CUDAIPC_MAX_SLOT_SIZE + 1;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 0, -EMSGSIZE);
  fill_sample (&msg, CUDAIPC_MSG_FRAME);
  msg.u.frame.planes[3].offset = CUDAIPC_MAX_SLOT_SIZE;
  len = build_ok (&msg, 1);
  expect_parse_error (len, 0, -EBADMSG);

  /* metadata: more than the limit, or more than there is */
  fill_sample (&msg, CUDAIPC_MSG_FRAME);
  len = build_ok (&msg, 1);
  GST_WRITE_UINT32_LE (buf + len - 4, CUDAIPC_MAX_META_BYTES + 1);
  expect_parse_error (len, 0, -EMSGSIZE);
  GST_WRITE_UINT32_LE (buf + len - 4, 8);
  expect_parse_error (len, 0, -EBADMSG);
  msg.u.frame.meta_len = CUDAIPC_MAX_META_BYTES + 1;
  msg.u.frame.meta = (const guint8 *) "";
  fail_unless_equals_int (cudaipc_msg_build (&msg, 1, buf, sizeof (buf)),
      -EMSGSIZE);
}

GST_END_TEST;

GST_START_TEST (test_other_bounds)
{
  CudaIpcMsg msg, out;
  gsize len;

  fill_sample (&msg, CUDAIPC_MSG_RELEASE);
  msg.u.release.slot = CUDAIPC_MAX_SLOTS;
  len = build_ok (&msg, 1);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + RELEASE_SLOT), 64);
  expect_parse_error (len, 0, -EBADMSG);

  fill_sample (&msg, CUDAIPC_MSG_BYE);
  msg.u.bye.reason = CUDAIPC_BYE_LAST + 1;
  len = build_ok (&msg, 1);
  fail_unless_equals_int (GST_READ_UINT32_LE (buf + BYE_REASON),
      CUDAIPC_BYE_LAST + 1);
  expect_parse_error (len, 0, -EBADMSG);
  msg.u.bye.reason = CUDAIPC_BYE_LAST;
  len = build_ok (&msg, 1);
  fail_unless_equals_int (cudaipc_msg_parse (buf, len, NULL, 0, &out), 0);
  cudaipc_msg_clear (&out);
}

GST_END_TEST;

/* Every single-byte corruption of every message type: whatever the parse
 * says, it must not crash, leak or hand back fds it did not keep. */
GST_START_TEST (test_corruption)
{
  for (guint t = 0; t < G_N_ELEMENTS (all_types); t++) {
    CudaIpcMsg msg;
    gsize len;

    fill_sample (&msg, all_types[t]);
    len = build_ok (&msg, 1);
    for (gsize pos = 0; pos < len; pos++) {
      static const guint8 values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };

      for (guint v = 0; v < G_N_ELEMENTS (values); v++) {
        int fds[CUDAIPC_MAX_MSG_FDS];
        CudaIpcMsg out;
        gint ret;

        build_ok (&msg, 1);
        buf[pos] = values[v];
        for (guint i = 0; i < msg.n_fds; i++)
          fds[i] = cudaipc_test_memfd (0, FALSE);
        ret = cudaipc_msg_parse (buf, len, fds, msg.n_fds, &out);
        fail_unless (ret == 0 || ret == -EBADMSG || ret == -EPROTO ||
            ret == -EMSGSIZE || ret == -EPROTONOSUPPORT);
        for (guint i = 0; i < msg.n_fds; i++)
          fail_unless_equals_int (fds[i], -1);
        fail_unless_equals_int (out.n_fds, ret == 0 ? msg.n_fds : 0);
        cudaipc_msg_clear (&out);
      }
    }
  }
}

GST_END_TEST;

static Suite *
protocol_suite (void)
{
  Suite *s = suite_create ("protocol");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_test (tc, test_type_names);
  tcase_add_test (tc, test_init_clear);
  tcase_add_test (tc, test_round_trip_all);
  tcase_add_test (tc, test_round_trip_variants);
  tcase_add_test (tc, test_layout);
  tcase_add_test (tc, test_build_errors);
  tcase_add_test (tc, test_truncated);
  tcase_add_test (tc, test_header_errors);
  tcase_add_test (tc, test_trailing_bytes);
  tcase_add_test (tc, test_version);
  tcase_add_test (tc, test_hello_fields);
  tcase_add_test (tc, test_fd_count);
  tcase_add_test (tc, test_strings);
  tcase_add_test (tc, test_ring_bounds);
  tcase_add_test (tc, test_ring_fence);
  tcase_add_test (tc, test_slot_bounds);
  tcase_add_test (tc, test_frame_bounds);
  tcase_add_test (tc, test_other_bounds);
  tcase_add_test (tc, test_corruption);

  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "protocol",
  .suite = protocol_suite,
};
