/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What lets a public object's free() come while other threads are still
 * in calls on it (cudaipc.h, Threads): each call runs between enter() and
 * leave(); free() first closes the guard (calls that start afterwards
 * are refused at once), then ends the waits of those in flight (the
 * object's own cancel), then waits until the last has left, and only then
 * frees. A call that starts after free() returned is the caller's bug:
 * nothing can catch it.
 *
 * Any thread; a guard lives inside the object it guards.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  GMutex lock;
  GCond idle;                   /* the last call left */
  guint calls;                  /* in flight */
  gint closing;                 /* atomic: free() began */
} CudaIpcApiGuard;

static inline void
cudaipc_api_guard_init (CudaIpcApiGuard * g)
{
  g_mutex_init (&g->lock);
  g_cond_init (&g->idle);
  g->calls = 0;
  g->closing = 0;
}

/* FALSE once free() began: the call returns at once. */
static inline gboolean
cudaipc_api_guard_enter (CudaIpcApiGuard * g)
{
  gboolean ok;

  g_mutex_lock (&g->lock);
  ok = !g_atomic_int_get (&g->closing);
  if (ok)
    g->calls++;
  g_mutex_unlock (&g->lock);
  return ok;
}

/* Only free() waits for the calls to end, and it closes the guard first,
 * under the lock: a leave() that finds it open has no one to wake (a
 * broadcast is a system call, every call of every frame). */
static inline void
cudaipc_api_guard_leave (CudaIpcApiGuard * g)
{
  g_mutex_lock (&g->lock);
  if (--g->calls == 0 && g_atomic_int_get (&g->closing))
    g_cond_broadcast (&g->idle);
  g_mutex_unlock (&g->lock);
}

/* Whether free() began, for a call in flight that is about to wait. */
static inline gboolean
cudaipc_api_guard_closing (CudaIpcApiGuard * g)
{
  return g_atomic_int_get (&g->closing);
}

/* free()'s first step: no call starts after it. */
static inline void
cudaipc_api_guard_close (CudaIpcApiGuard * g)
{
  g_mutex_lock (&g->lock);
  g_atomic_int_set (&g->closing, 1);
  g_mutex_unlock (&g->lock);
}

/* free()'s second step, once the waits were ended: the calls in flight
 * have all returned when this does. */
static inline void
cudaipc_api_guard_wait (CudaIpcApiGuard * g)
{
  g_mutex_lock (&g->lock);
  while (g->calls > 0)
    g_cond_wait (&g->idle, &g->lock);
  g_mutex_unlock (&g->lock);
}

static inline void
cudaipc_api_guard_clear (CudaIpcApiGuard * g)
{
  g_cond_clear (&g->idle);
  g_mutex_clear (&g->lock);
}

G_END_DECLS
