/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small fd helpers. A variable that owns no fd holds -1.
 * `cudaipc_autofd int fd = -1;` closes fd when it goes out of scope;
 * cudaipc_steal_fd() hands the fd over and leaves -1 behind.
 */
#pragma once

#include <errno.h>
#include <unistd.h>
#include <glib.h>

static inline void
cudaipc_close_fd (int *fd)
{
  if (fd && *fd >= 0) {
    int saved = errno;
    close (*fd);
    *fd = -1;
    errno = saved;
  }
}

static inline int
cudaipc_steal_fd (int *fd)
{
  int ret = *fd;
  *fd = -1;
  return ret;
}

static inline void
cudaipc_close_fds (int *fds, guint n)
{
  for (guint i = 0; i < n; i++)
    cudaipc_close_fd (&fds[i]);
}

#define cudaipc_autofd __attribute__((cleanup (cudaipc_close_fd)))
