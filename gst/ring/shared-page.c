/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The checks of a page of shared memory (shared-page.h has the contract).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* F_GET_SEALS */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "common/error.h"
#include "ring/shared-page.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010      /* Linux 5.1 */
#endif

gboolean
cudaipc_shared_page_check (int fd, const gchar * what, gsize size,
    gboolean producer_writes_only, GError ** error)
{
  struct stat st;
  int seals;

  if (fstat (fd, &st) < 0) {
    int e = errno;

    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "the %s's fd: %s", what, g_strerror (e));
    return FALSE;
  }
  if (!S_ISREG (st.st_mode)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "the %s's fd is not a memory file (mode 0%o)", what,
        (guint) (st.st_mode & S_IFMT));
    return FALSE;
  }
  seals = fcntl (fd, F_GET_SEALS);
  if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "the %s is not sealed against shrinking (%s): it could be cut "
        "under the mapping", what, seals < 0 ? "not a memfd" :
        "no F_SEAL_SHRINK");
    return FALSE;
  }
  if (producer_writes_only && !(seals & F_SEAL_FUTURE_WRITE)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "the %s is not sealed against writes by its consumers (no "
        "F_SEAL_FUTURE_WRITE): any consumer could set the words every "
        "other consumer reads", what);
    return FALSE;
  }
  if ((guint64) st.st_size < size) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "the %s is %" G_GINT64_FORMAT " bytes, fewer than %" G_GSIZE_FORMAT,
        what, (gint64) st.st_size, size);
    return FALSE;
  }
  return TRUE;
}
