/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target: the wire protocol parser.
 *
 * Input: byte 0 picks how many fds arrive with the datagram (0..20), the
 * rest is the datagram. Every parse must either fail or give a message
 * that builds back into bytes that parse to the same type; in both cases
 * every fd that arrived must be closed once the message is cleared (an fd
 * count taken before and after catches a leak or a double close).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wire/protocol.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput (const guint8 * data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 * data, size_t size)
{
  static guint8 out[CUDAIPC_MAX_MESSAGE];
  int fds[20];
  guint n_fds, before;
  CudaIpcMsg msg, again;
  gint ret;

  if (size < 1)
    return 0;
  n_fds = data[0] % 21;
  before = fuzz_count_fds ();
  for (guint i = 0; i < n_fds; i++)
    fds[i] = open ("/dev/null", O_RDONLY | O_CLOEXEC);

  ret = cudaipc_msg_parse (data + 1, size - 1, fds, n_fds, &msg);
  if (ret == 0) {
    gssize len;
    int borrowed[CUDAIPC_MAX_MSG_FDS];
    guint n = msg.n_fds;

    /* build back (fds borrowed: duplicate them for the second parse) */
    len = cudaipc_msg_build (&msg, msg.seq, out, sizeof (out));
    if (len < 0)
      abort ();
    for (guint i = 0; i < n; i++)
      borrowed[i] = dup (msg.fds[i]);
    if (cudaipc_msg_parse (out, len, borrowed, n, &again) != 0 ||
        again.type != msg.type || again.seq != msg.seq)
      abort ();
    cudaipc_msg_clear (&again);
  }
  cudaipc_msg_clear (&msg);
  if (fuzz_count_fds () != before)
    abort ();
  return 0;
}
