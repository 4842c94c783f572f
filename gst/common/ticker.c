/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/ticker.h"

struct _CudaIpcTicker
{
  GMutex lock;
  GCond cond;
  gboolean stopping;            /* lock */
  gint64 interval_us;
  CudaIpcTickFunc func;
  gpointer user_data;
  GThread *thread;
};

static gpointer
ticker_thread (gpointer data)
{
  CudaIpcTicker *t = data;
  /* ticks are due at fixed times, so a slow @func does not make the
   * interval drift */
  gint64 due = g_get_monotonic_time () + t->interval_us;

  g_mutex_lock (&t->lock);
  while (!t->stopping) {
    if (!g_cond_wait_until (&t->cond, &t->lock, due) && !t->stopping) {
      gint64 now;

      g_mutex_unlock (&t->lock);
      t->func (t->user_data);
      g_mutex_lock (&t->lock);

      now = g_get_monotonic_time ();
      due += t->interval_us;
      /* after a stall, tick once and start counting again from now */
      if (due <= now)
        due = now + t->interval_us;
    }
  }
  g_mutex_unlock (&t->lock);
  return NULL;
}

CudaIpcTicker *
cudaipc_ticker_new (const gchar * name, guint interval_ms,
    CudaIpcTickFunc func, gpointer user_data)
{
  CudaIpcTicker *t;

  g_return_val_if_fail (interval_ms > 0, NULL);
  g_return_val_if_fail (func != NULL, NULL);

  t = g_new0 (CudaIpcTicker, 1);
  g_mutex_init (&t->lock);
  g_cond_init (&t->cond);
  t->interval_us = (gint64) interval_ms * G_TIME_SPAN_MILLISECOND;
  t->func = func;
  t->user_data = user_data;
  t->thread = g_thread_new (name ? name : "cudaipc-ticker", ticker_thread, t);
  return t;
}

void
cudaipc_ticker_free (CudaIpcTicker * t)
{
  if (t == NULL)
    return;

  g_mutex_lock (&t->lock);
  t->stopping = TRUE;
  g_cond_signal (&t->cond);
  g_mutex_unlock (&t->lock);
  g_thread_join (t->thread);

  g_cond_clear (&t->cond);
  g_mutex_clear (&t->lock);
  g_free (t);
}
