/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Running ipc-node processes (or another program) from a gst-check test:
 * a socket in a temporary folder (setup/teardown fixtures), spawning a node
 * with its stdout and stderr captured, waiting for it with a time limit,
 * and reading the "key=value" fields of the line it printed.
 */
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>

#include "test-pattern.h"
#include "test-util.h"

typedef struct
{
  GPid pid;
  int out_fd, err_fd;
  GString *out, *err;
  int status;
  gboolean done;
} Node;

static gchar *sock;

static inline void
nodes_setup (void)
{
  sock = cudaipc_test_socket_path ("el", "s.sock");
}

static inline void
nodes_teardown (void)
{
  cudaipc_test_socket_remove (&sock);
}

/* Runs @argv (NULL-terminated) with its stdout and stderr captured. */
static inline Node *
spawn_argv (gchar ** argv)
{
  GError *err = NULL;
  Node *n = g_new0 (Node, 1);

  fail_unless (g_spawn_async_with_pipes (NULL, argv, NULL,
          G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &n->pid, NULL, &n->out_fd,
          &n->err_fd, &err), "spawn %s: %s", argv[0],
      err ? err->message : "");
  fcntl (n->out_fd, F_SETFL, O_NONBLOCK);
  fcntl (n->err_fd, F_SETFL, O_NONBLOCK);
  n->out = g_string_new (NULL);
  n->err = g_string_new (NULL);
  return n;
}

static inline Node *
spawn_node (const gchar * role, const gchar * first, ...)
{
  const gchar *node = g_getenv ("CUDAIPC_IPC_NODE");
  GPtrArray *argv = g_ptr_array_new ();
  const gchar *arg;
  Node *n;
  va_list ap;

  fail_unless (node != NULL, "CUDAIPC_IPC_NODE is not set");
  g_ptr_array_add (argv, (gpointer) node);
  g_ptr_array_add (argv, (gpointer) role);
  g_ptr_array_add (argv, sock);
  va_start (ap, first);
  for (arg = first; arg; arg = va_arg (ap, const gchar *))
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  n = spawn_argv ((gchar **) argv->pdata);
  g_ptr_array_free (argv, TRUE);
  return n;
}

static inline void
drain (int fd, GString * into)
{
  char buf[4096];
  ssize_t r;

  while ((r = read (fd, buf, sizeof (buf))) > 0)
    g_string_append_len (into, buf, r);
}

/* Waits for @n to exit, killing it after @timeout_s; prints what it said. */
static inline void
wait_node (Node * n, gint timeout_s)
{
  gint64 deadline = g_get_monotonic_time () + timeout_s * G_USEC_PER_SEC;

  while (waitpid (n->pid, &n->status, WNOHANG) == 0) {
    drain (n->out_fd, n->out);
    drain (n->err_fd, n->err);
    if (g_get_monotonic_time () > deadline) {
      g_print ("killing a node that ran past %d s\n", timeout_s);
      kill (n->pid, SIGKILL);
      waitpid (n->pid, &n->status, 0);
      break;
    }
    g_usleep (5000);
  }
  drain (n->out_fd, n->out);
  drain (n->err_fd, n->err);
  g_spawn_close_pid (n->pid);
  close (n->out_fd);
  close (n->err_fd);
  n->done = TRUE;
  g_print ("%s", n->out->str);
}

static inline guint64
field (Node * n, const gchar * name)
{
  gchar *key = g_strdup_printf (" %s=", name);
  const gchar *at = strstr (n->out->str, key);
  guint64 v;

  fail_unless (at != NULL, "no %s in '%s' (stderr: %s)", name, n->out->str,
      n->err->str);
  v = g_ascii_strtoull (at + strlen (key), NULL, 10);
  g_free (key);
  return v;
}

static inline void
assert_exit_ok (Node * n)
{
  fail_unless (WIFEXITED (n->status) && WEXITSTATUS (n->status) == 0,
      "node failed (status %d): %s %s", n->status, n->out->str, n->err->str);
}

static inline void
node_free (Node * n)
{
  if (!n->done)
    wait_node (n, 1);
  g_string_free (n->out, TRUE);
  g_string_free (n->err, TRUE);
  g_free (n);
}

/* TRUE where ipc-node finds a CUDA device (it prints why not otherwise). */
static inline gboolean
cudaipc_test_have_gpu (void)
{
  gchar *argv[] = { (gchar *) g_getenv ("CUDAIPC_IPC_NODE"),
    (gchar *) "probe", NULL
  };
  gint status = 0;
  gchar *out = NULL;
  gboolean ok;

  ok = argv[0] && g_spawn_sync (NULL, argv, NULL, 0, NULL, NULL, &out, NULL,
      &status, NULL) && g_spawn_check_wait_status (status, NULL);
  if (!ok)
    g_print ("SKIP: %s", out ? out : "no ipc-node\n");
  g_free (out);
  return ok;
}

/* The prepare hook (test-main.h) of a suite built again for the gpu suite:
 * CUDAIPC_TEST_SKIP where ipc-node finds no CUDA device. */
static inline gint
cudaipc_test_need_gpu (void)
{
  if (!cudaipc_test_have_gpu ())
    return CUDAIPC_TEST_SKIP;
  return 0;
}
