/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Faults across processes: consumers and producers killed with SIGKILL
 * mid-stream, a producer restarted on the socket a crashed one left
 * behind, consumers that break the protocol on purpose, and one that tries
 * to write what it was sent to read. Every other consumer must keep
 * receiving every frame, intact.
 *
 * Built for the elements suite (host backend) and, with CUDAIPC_TEST_GPU,
 * for the gpu suite (cuda backend; skips with 77 without a GPU).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pwd.h>
#include <string.h>
#include <sys/wait.h>

#include "ipc-nodes.h"
#include "test-main.h"
#include "test-pattern.h"

#ifdef CUDAIPC_TEST_GPU
#define BACKEND "cuda"
/* what the CUDA driver maps into a consumer that readies its device
 * before connecting (about 120 MiB on an H200 with driver 580) */
#define CUDA_RSS_KIB (256 * 1024)
#else
#define BACKEND "host"
#define CUDA_RSS_KIB 0
#endif

GST_START_TEST (test_consumer_killed_frees_its_slots)
{
  Node *victim, *survivor, *p;

  /* the victim holds every slot of the ring, then dies: the producer must
   * take the slots back at once, or it could not go on without drops */
  victim = spawn_node ("consumer", "--hold", "4", "--die-after", "4", NULL);
  survivor = spawn_node ("consumer", NULL);
  p = spawn_node ("producer", "--frames", "200", "--clients", "2", "--sink",
      "backend=" BACKEND " ring-size=4 on-full=wait full-timeout=10000",
      NULL);
  wait_node (p, 120);
  wait_node (survivor, 120);
  wait_node (victim, 30);
  assert_exit_ok (p);
  assert_exit_ok (survivor);
  fail_unless (WIFSIGNALED (victim->status) &&
      WTERMSIG (victim->status) == SIGKILL);
  fail_unless_equals_uint64 (field (p, "published"), 200);
  fail_unless_equals_uint64 (field (p, "dropped"), 0);
  /* the victim's departure was seen (the survivor may leave after the
   * producer printed its counts) */
  fail_unless (field (p, "left") >= 1, "the producer missed the crash");
  {
    /* the message names the consumer that left, and why */
    g_autofree gchar *who = g_strdup_printf ("cudaipcsink-client-left, "
        "name=(string)cudaipcsrc-%d, pid=(int)%d, reason=(string)",
        (int) victim->pid, (int) victim->pid);

    fail_unless (strstr (p->err->str, who) != NULL, "no \"%s\" in: %s",
        who, p->err->str);
  }
  fail_unless_equals_uint64 (field (survivor, "frames"), 200);
  fail_unless_equals_uint64 (field (survivor, "bad"), 0);
  node_free (p);
  node_free (survivor);
  node_free (victim);
}

GST_END_TEST;

/* The first producer dies mid-stream and leaves its socket file; the
 * consumer (its messages as @announce says) warns and keeps retrying,
 * longer than its connect-timeout (which is for the first connection
 * only); a new producer replaces the stale socket and the consumer goes
 * on to its EOS. It holds its last three frames all along: those of the
 * dead producer stay intact until it lets them go. */
static void
killed_and_restarted (const gchar * announce)
{
  Node *c, *p1, *p2;
  gchar *src = g_strdup_printf ("reconnect=true connect-timeout=5000 "
      "announce=%s", announce);

  p1 = spawn_node ("producer", "--frames", "1000", "--clients", "1",
      "--die-after", "40", "--sink", "backend=" BACKEND, NULL);
  c = spawn_node ("consumer", "--hold", "3", "--src", src, NULL);
  g_free (src);
  wait_node (p1, 60);
  fail_unless (WIFSIGNALED (p1->status));
  fail_unless (g_file_test (sock, G_FILE_TEST_EXISTS));
  g_usleep (6 * G_USEC_PER_SEC);
  p2 = spawn_node ("producer", "--frames", "60", "--clients", "1", "--sink",
      "backend=" BACKEND, NULL);
  wait_node (p2, 60);
  wait_node (c, 60);
  assert_exit_ok (p2);
  assert_exit_ok (c);
  fail_unless (field (c, "frames") >= 60 + 30, "too few frames");
  fail_unless_equals_uint64 (field (c, "bad"), 0);
  fail_unless_equals_uint64 (field (c, "recheck_bad"), 0);
  fail_unless_equals_uint64 (field (c, "last"), 59);
  fail_unless (field (c, "warnings") >= 1, "no warning about the crash");
  /* each connection through the channel where asked */
  fail_unless_equals_uint64 (field (c, "channel"),
      g_str_equal (announce, "shared-memory") ? field (c, "connects") : 0);
  node_free (c);
  node_free (p1);
  node_free (p2);
}

GST_START_TEST (test_producer_killed_and_restarted)
{
  killed_and_restarted ("socket");
}

GST_END_TEST;

/* the same, the consumer told of its frames through shared memory: the
 * producer's death is seen through the socket beside the page */
GST_START_TEST (test_producer_killed_channel)
{
  killed_and_restarted ("shared-memory");
}

GST_END_TEST;

GST_START_TEST (test_producer_killed_no_reconnect)
{
  Node *c, *p;

  c = spawn_node ("consumer", "--src", "reconnect=false", NULL);
  p = spawn_node ("producer", "--frames", "1000", "--clients", "1",
      "--die-after", "20", "--sink", "backend=" BACKEND, NULL);
  wait_node (p, 60);
  wait_node (c, 60);
  /* a clear error, not a hang and not a crash */
  fail_unless (WIFEXITED (c->status) && WEXITSTATUS (c->status) == 1,
      "status %d", c->status);
  fail_unless (strstr (c->err->str, "error from") != NULL,
      "the consumer posted no error");
  fail_unless (field (c, "frames") >= 15);
  fail_unless_equals_uint64 (field (c, "bad"), 0);
  node_free (c);
  node_free (p);
}

GST_END_TEST;

/* A producer killed for good: a consumer that reconnects gives up after
 * reconnect-timeout with an error that says so and how to wait longer,
 * and ends (what an OpenCV read() on it needs); one set to wait for ever
 * (0) does not. */
GST_START_TEST (test_producer_killed_stays_away)
{
  Node *bounded, *patient, *p;
  gint64 lost, took;

  bounded = spawn_node ("consumer", "--src", "reconnect-timeout=1000", NULL);
  patient = spawn_node ("consumer", "--src", "reconnect-timeout=0", NULL);
  p = spawn_node ("producer", "--frames", "1000", "--clients", "2",
      "--die-after", "20", "--sink", "backend=" BACKEND, NULL);
  wait_node (p, 60);
  fail_unless (WIFSIGNALED (p->status));
  lost = g_get_monotonic_time ();
  wait_node (bounded, 30);
  took = (g_get_monotonic_time () - lost) / 1000;
  fail_unless (WIFEXITED (bounded->status) &&
      WEXITSTATUS (bounded->status) == 1, "status %d", bounded->status);
  fail_unless (strstr (bounded->err->str, "stayed away for 1 s after it was "
          "lost") && strstr (bounded->err->str, "raise reconnect-timeout") &&
      strstr (bounded->err->str, "0 waits for ever"), "unclear error: %s",
      bounded->err->str);
  fail_unless (took < 10000, "gave up after %" G_GINT64_FORMAT " ms", took);
  fail_unless (field (bounded, "frames") >= 15);

  /* 0: still waiting, well past the other's time-out */
  g_usleep (2 * G_USEC_PER_SEC);
  fail_unless (waitpid (patient->pid, &patient->status, WNOHANG) == 0,
      "reconnect-timeout=0 gave up");
  kill (patient->pid, SIGKILL);
  wait_node (patient, 10);
  fail_if (strstr (patient->err->str, "stayed away") != NULL);
  node_free (p);
  node_free (bounded);
  node_free (patient);
}

GST_END_TEST;

GST_START_TEST (test_stuck_consumer_dropped)
{
  Node *good, *stuck, *p;

  /* the stuck consumer stops taking frames and, copying none, holds every
   * slot it is given; the producer waits for a slot, finds it stuck past
   * consumer-timeout and drops it: the good consumer loses nothing */
  good = spawn_node ("consumer", NULL);
  stuck = spawn_node ("consumer", "--stall-after", "10", "--src",
      "copy-threshold=0", NULL);
  p = spawn_node ("producer", "--frames", "300", "--fps", "300", "--clients",
      "2", "--sink", "backend=" BACKEND " ring-size=4 on-full=wait "
      "full-timeout=2000 consumer-timeout=300", NULL);
  wait_node (p, 60);
  wait_node (good, 60);
  assert_exit_ok (p);
  assert_exit_ok (good);
  fail_unless_equals_uint64 (field (p, "dropped"), 0);
  fail_unless (field (p, "warnings") >= 1, "no warning about the stuck one");
  fail_unless_equals_uint64 (field (good, "frames"), 300);
  fail_unless_equals_uint64 (field (good, "bad"), 0);
  fail_unless (strstr (p->err->str, "Dropped consumer") != NULL,
      "no warning names the stuck consumer");
  node_free (p);
  node_free (good);
  kill (stuck->pid, SIGKILL);
  node_free (stuck);
}

GST_END_TEST;

/* One of three consumers is stopped (SIGSTOP) for 2 s while it holds
 * frames, then continued. The producer drops it as stuck and retires the
 * ring it held, so nothing it holds or still has queued changes: after
 * SIGCONT it checks the four frames it kept downstream again (recheck_bad)
 * and every frame it pushes (bad), reconnects and runs to the end. The
 * other two lose nothing the producer published. On the cuda backend the
 * device's free memory after frame 100 (one ring, three consumers, before
 * the stop) and after frame 480 (the consumer dropped at about frame 230,
 * continued at 400 and connected again, the same three processes) must be
 * equal: the retired ring went once its last holder let go. */
static void
stopped_consumer_case (const gchar * on_full)
{
  Node *good1, *good2, *victim, *p;
  gchar *props = g_strdup_printf ("backend=" BACKEND " ring-size=8 "
      "on-full=%s full-timeout=3000 consumer-timeout=300", on_full);
  guint64 published;

  /* copy-threshold=0: no consumer makes copies of its own in the device
   * memory counted below (appsink queues what the main loop has not
   * pulled yet, which after the stop can be half the ring) */
  good1 = spawn_node ("consumer", "--src", "copy-threshold=0", NULL);
  good2 = spawn_node ("consumer", "--src", "copy-threshold=0", NULL);
  victim = spawn_node ("consumer", "--hold", "4", "--src",
      "reconnect=true copy-threshold=0", NULL);
  p = spawn_node ("producer", "--frames", "500", "--fps", "100",
      "--clients", "3", "--sink", props, "--gpu-free-at", "100,480", NULL);
  /* the producer waits for three consumers, then plays for 5 s */
  g_usleep (2 * G_USEC_PER_SEC);
  fail_unless_equals_int (kill (victim->pid, SIGSTOP), 0);
  g_usleep (2 * G_USEC_PER_SEC);
  fail_unless_equals_int (kill (victim->pid, SIGCONT), 0);
  wait_node (p, 60);
  wait_node (good1, 60);
  wait_node (good2, 60);
  wait_node (victim, 60);
  assert_exit_ok (p);
  assert_exit_ok (good1);
  assert_exit_ok (good2);
  published = field (p, "published");
  g_print ("on-full=%s: published %" G_GUINT64_FORMAT ", the stopped "
      "consumer got %" G_GUINT64_FORMAT " (bad %" G_GUINT64_FORMAT
      ", recheck_bad %" G_GUINT64_FORMAT ", discarded %" G_GUINT64_FORMAT
      "), copies made %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "/%"
      G_GUINT64_FORMAT "\n", on_full, published, field (victim, "frames"),
      field (victim, "bad"), field (victim, "recheck_bad"),
      field (victim, "discarded"), field (good1, "copied"),
      field (good2, "copied"), field (victim, "copied"));
  fail_unless (strstr (p->err->str, "Dropped consumer") != NULL,
      "the stopped consumer was not dropped");
  fail_unless_equals_uint64 (field (good1, "frames"), published);
  fail_unless_equals_uint64 (field (good2, "frames"), published);
  fail_unless_equals_uint64 (field (good1, "bad"), 0);
  fail_unless_equals_uint64 (field (good2, "bad"), 0);
  if (g_str_equal (on_full, "wait"))
    fail_unless_equals_uint64 (published, 500);
  /* the stopped one: nothing it pushed or held changed */
  assert_exit_ok (victim);
  fail_unless_equals_uint64 (field (victim, "bad"), 0);
  fail_unless_equals_uint64 (field (victim, "recheck_bad"), 0);
  fail_unless_equals_uint64 (field (victim, "last"), 499);
  fail_unless (field (victim, "frames") < published,
      "the stopped consumer lost no frame: was it stopped?");
  /* frames queued for it when it was dropped were not pushed */
  fail_unless (field (victim, "discarded") >= 1,
      "no frame queued before the producer's BYE was discarded");
#ifdef CUDAIPC_TEST_GPU
  {
    guint64 before = field (p, "gpu_free_at_100");
    guint64 after = field (p, "gpu_free_at_480");

    g_print ("on-full=%s: device memory free after frame 100 %"
        G_GUINT64_FORMAT ", after frame 480 %" G_GUINT64_FORMAT "\n",
        on_full, before, after);
    fail_unless (before > 0);
    fail_unless_equals_uint64 (after, before);
  }
#endif
  node_free (p);
  node_free (good1);
  node_free (good2);
  node_free (victim);
  g_free (props);
}

GST_START_TEST (test_stopped_consumer_wait)
{
  stopped_consumer_case ("wait");
}

GST_END_TEST;

GST_START_TEST (test_stopped_consumer_drop)
{
  stopped_consumer_case ("drop");
}

GST_END_TEST;

/* A producer whose frames carry metadata that breaks the rules: every
 * frame still goes out, intact, with the metas decoded before the bad
 * one; the rest are refused and counted, and the source warns once. */
static void
bad_metas_case (const gchar * mode, guint64 carried_per_frame)
{
  const gchar *rogue = g_getenv ("CUDAIPC_ROGUE_PRODUCER");
  gchar *argv[] = { (gchar *) rogue, sock, (gchar *) "--frames",
    (gchar *) "30", (gchar *) "--mode", (gchar *) mode, NULL
  };
  Node *c, *p;

  fail_unless (rogue != NULL, "CUDAIPC_ROGUE_PRODUCER is not set");
  p = spawn_argv (argv);
  c = spawn_node ("consumer", "--src", "reconnect=false", NULL);
  wait_node (c, 60);
  wait_node (p, 60);
  assert_exit_ok (c);
  assert_exit_ok (p);
  g_print ("bad metas (%s): %" G_GUINT64_FORMAT " frames, %"
      G_GUINT64_FORMAT " metas received, %" G_GUINT64_FORMAT " refused, %"
      G_GUINT64_FORMAT " warning(s)\n", mode, field (c, "frames"),
      field (c, "metas_received"), field (c, "metas_refused"),
      field (c, "warnings"));
  fail_unless_equals_uint64 (field (c, "frames"), 30);
  fail_unless_equals_uint64 (field (c, "bad"), 0);
  fail_unless_equals_uint64 (field (c, "metas_refused"), 30);
  fail_unless_equals_uint64 (field (c, "metas_received"),
      30 * carried_per_frame);
  fail_unless_equals_uint64 (field (c, "warnings"), 1);
  fail_unless (strstr (c->err->str, "frame metadata that breaks the rules"),
      "no warning: %s", c->err->str);
  node_free (c);
  node_free (p);
}

/* A producer whose custom events name about a million names no process
 * knew: past the budget a process takes from peers the events are
 * refused, counted and warned of once, every frame goes out intact, and
 * the consumer's memory stays bounded (it grew to over 700 MB when
 * GStreamer's parser interned them all). */
GST_START_TEST (test_producer_floods_new_names)
{
  const gchar *rogue = g_getenv ("CUDAIPC_ROGUE_PRODUCER");
  gchar *argv[] = { (gchar *) rogue, sock, (gchar *) "--frames",
    (gchar *) "30", (gchar *) "--mode", (gchar *) "names", NULL
  };
  guint64 peak = 0;
  guint samples = 0;
  siginfo_t info;
  Node *c, *p;

  fail_unless (rogue != NULL, "CUDAIPC_ROGUE_PRODUCER is not set");
  p = spawn_argv (argv);
  c = spawn_node ("consumer", "--src", "reconnect=false", NULL);
  for (gint64 end = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
      g_get_monotonic_time () < end;) {
    memset (&info, 0, sizeof (info));
    if (waitid (P_PID, c->pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid != 0)
      break;
    /* the peak so far (0 once it is gone) */
    peak = MAX (peak, cudaipc_test_status_kib (c->pid, "VmHWM"));
    samples++;
    drain (c->out_fd, c->out);
    drain (c->err_fd, c->err);
    g_usleep (20 * 1000);
  }
  wait_node (c, 60);
  wait_node (p, 60);
  assert_exit_ok (c);
  assert_exit_ok (p);
  /* and its own figure at its end: on a loaded machine every sample may
   * miss it (a process still being made, or already going) */
  peak = MAX (peak, field (c, "peak_kib"));
  g_print ("new names: the consumer got %" G_GUINT64_FORMAT " frames (bad %"
      G_GUINT64_FORMAT "), %" G_GUINT64_FORMAT " warning(s), peak RSS %"
      G_GUINT64_FORMAT " KiB (%u samples)\n", field (c, "frames"),
      field (c, "bad"), field (c, "warnings"), peak, samples);
  fail_unless_equals_uint64 (field (c, "frames"), 30);
  fail_unless_equals_uint64 (field (c, "bad"), 0);
  fail_unless_equals_uint64 (field (c, "warnings"), 1);
  fail_unless (strstr (c->err->str, "sent events this consumer refused"),
      "no warning: %s", c->err->str);
  /* the warning names the producer */
  fail_unless (strstr (c->err->str, "The producer 'rogue-producer' (pid "),
      "the warning does not name the producer: %s", c->err->str);
  fail_unless (peak > 0 && peak < 100 * 1024 + CUDAIPC_TEST_RSS_SLACK_KIB +
      CUDA_RSS_KIB, "peak RSS %" G_GUINT64_FORMAT " KiB", peak);
  node_free (c);
  node_free (p);
}

GST_END_TEST;

#ifndef CUDAIPC_TEST_GPU
/* A consumer that plays stuck, keeps every fd it is sent and connects
 * again (pinning-consumer): each drop retires the ring it holds, which
 * stays allocated as long as it keeps the fds. Its user is refused once
 * two such rings are pinned, the producer says who, and the honest
 * consumer gets every frame meanwhile. Without the bound it was sent a
 * new ring every time it was dropped. Host backend only: on the cuda
 * backend the same path runs, with VMM exports as the fds. */
GST_START_TEST (test_consumer_pins_retired_rings)
{
  const gchar *pinner = g_getenv ("CUDAIPC_PINNING_CONSUMER");
  gchar *argv[] = { (gchar *) pinner, sock, (gchar *) "6", NULL };
  Node *good, *pin, *p;
  guint64 published;

  fail_unless (pinner != NULL, "CUDAIPC_PINNING_CONSUMER is not set");
  good = spawn_node ("consumer", NULL);
  p = spawn_node ("producer", "--frames", "400", "--fps", "100",
      "--clients", "1", "--sink", "backend=host ring-size=4 "
      "on-full=wait full-timeout=3000 consumer-timeout=200", NULL);
  g_usleep (300 * 1000);
  pin = spawn_argv (argv);
  wait_node (pin, 30);
  wait_node (p, 60);
  wait_node (good, 60);
  assert_exit_ok (pin);
  assert_exit_ok (p);
  assert_exit_ok (good);
  published = field (p, "published");
  g_print ("pinning: the pinner made %" G_GUINT64_FORMAT " connection(s), "
      "was sent %" G_GUINT64_FORMAT " ring(s), refused %" G_GUINT64_FORMAT
      " time(s); the good consumer got %" G_GUINT64_FORMAT " of %"
      G_GUINT64_FORMAT " (bad %" G_GUINT64_FORMAT ")\n%s",
      field (pin, "connections"), field (pin, "rings"),
      field (pin, "refused"), field (good, "frames"), published,
      field (good, "bad"), pin->out->str);
  /* two rings pinned, then refused: no third */
  fail_unless (field (pin, "rings") <= 2, "the pinner was sent %"
      G_GUINT64_FORMAT " rings", field (pin, "rings"));
  fail_unless (field (pin, "refused") >= 1);
  fail_unless (strstr (pin->out->str, "still pin 2 retired ring(s)") != NULL,
      "the refusal does not say why: %s", pin->out->str);
  fail_unless (strstr (p->err->str, "'pinning-consumer', pid ") != NULL,
      "the producer's warning does not name the consumer: %s", p->err->str);
  fail_unless_equals_uint64 (published, 400);
  fail_unless_equals_uint64 (field (good, "frames"), published);
  fail_unless_equals_uint64 (field (good, "bad"), 0);
  node_free (pin);
  node_free (p);
  node_free (good);
}

GST_END_TEST;
#endif

GST_START_TEST (test_producer_bad_metas)
{
  /* the good crop before the bad entry stays */
  bad_metas_case ("truncated", 1);
  bad_metas_case ("deep", 1);
  /* 1024 metas go, the next is refused */
  bad_metas_case ("many", 1024);
}

GST_END_TEST;

/* A consumer may only read what it was sent (docs/design.md, Trust
 * model): a rogue that tries every way to write the fence page and, on
 * the host backend, the slots, at the ring and again at every frame, is
 * refused each time; the consumer beside it, which holds its last three
 * frames and checks them again when it lets them go, gets every frame
 * intact and never sees a fence word the producer did not write. Before
 * the producer sealed them, a rogue that filled them with 0xee broke
 * every other consumer. */
GST_START_TEST (test_rogue_writes_refused)
{
  gchar *argv[] = { (gchar *) g_getenv ("CUDAIPC_ROGUE_CONSUMER"), sock,
    NULL
  };
  Node *good, *rogue, *p;

  fail_unless (argv[0] != NULL, "CUDAIPC_ROGUE_CONSUMER is not set");
  good = spawn_node ("consumer", "--hold", "3", NULL);
  rogue = spawn_argv (argv);
  p = spawn_node ("producer", "--frames", "60", "--fps", "60", "--clients",
      "2", "--sink", "backend=" BACKEND " ring-size=4 ordering=fence", NULL);
  wait_node (p, 60);
  wait_node (good, 60);
  wait_node (rogue, 60);
  assert_exit_ok (p);
  assert_exit_ok (rogue);
  fail_unless (field (rogue, "frames") >= 1, "the rogue got no frame");
  fail_unless (field (rogue, "fence_pages") >= 1, "no fence page to try");
#ifndef CUDAIPC_TEST_GPU
  fail_unless (field (rogue, "slots") >= 4, "no slots to try");
#endif
  fail_unless_equals_uint64 (field (rogue, "wrote"), 0);
  fail_unless_equals_uint64 (field (rogue, "sealed"), field (rogue, "tries"));
  assert_exit_ok (good);
  fail_unless_equals_uint64 (field (good, "frames"), 60);
  fail_unless_equals_uint64 (field (good, "bad"), 0);
  fail_unless_equals_uint64 (field (good, "recheck_bad"), 0);
  fail_unless_equals_uint64 (field (good, "fenced"), 1);
  fail_unless_equals_uint64 (field (p, "dropped"), 0);
  node_free (p);
  node_free (good);
  node_free (rogue);
}

GST_END_TEST;

/* The line of @n's output that starts with @prefix, up to its end. */
static gchar *
node_line (Node * n, const gchar * prefix)
{
  const gchar *at = strstr (n->out->str, prefix);

  fail_unless (at != NULL, "no '%s' in '%s'", prefix, n->out->str);
  at += strlen (prefix);
  return g_strndup (at, strcspn (at, "\n"));
}

/* How many of @list are @item. */
static guint
count_of (gchar ** list, const gchar * item)
{
  guint n = 0;

  for (guint i = 0; list[i] != NULL; i++)
    n += g_str_equal (list[i], item);
  return n;
}

/* No more fds of any kind (other than sockets and release pages) are open
 * in producer @p at its end than at its first sample: one more was never
 * closed (the rogue's /dev/null, say). One fewer is fine: a rogue's fd in
 * flight at the first sample, received and not closed yet (its message is
 * read while frames flow). */
static void
assert_no_new_fds (Node * p)
{
  g_autofree gchar *start = node_line (p, "resources-others start ");
  g_autofree gchar *end = node_line (p, "resources-others end ");
  g_auto (GStrv) had = g_strsplit (start, ";", -1);
  g_auto (GStrv) has = g_strsplit (end, ";", -1);

  for (guint i = 0; has[i] != NULL; i++)
    fail_unless (count_of (has, has[i]) <= count_of (had, has[i]),
        "%u fd(s) of %s open at the end, %u at the start (start: %s; end: "
        "%s)", count_of (has, has[i]), has[i], count_of (had, has[i]), start,
        end);
  fail_unless (field (p, "other_fds_end") <= field (p, "other_fds_start"),
      "more fds at the end (start: %s; end: %s)", start, end);
}

static void
rogue_case (const gchar * mode, gboolean after_handshake)
{
  Node *good, *rogue, *p;

  good = spawn_node ("consumer", NULL);
  rogue = spawn_node ("rogue", "--mode", mode, NULL);
  /* a rogue that gets past the handshake is waited for, so that it acts
   * while frames flow (300 frames paced over a second) */
  p = spawn_node ("producer", "--frames", "300", "--fps", "300",
      "--clients", after_handshake ? "2" : "1", "--resources", "--sink",
      "backend=" BACKEND " ring-size=4", NULL);
  wait_node (rogue, 60);
  wait_node (p, 60);
  wait_node (good, 60);
  assert_exit_ok (rogue);
  assert_exit_ok (p);
  assert_exit_ok (good);
  fail_unless_equals_uint64 (field (rogue, "closed"), 1);
  fail_unless_equals_uint64 (field (p, "dropped"), 0);
  fail_unless (field (p, "warnings") >= 1, "no warning about the rogue");
  fail_unless_equals_uint64 (field (good, "frames"), 300);
  fail_unless_equals_uint64 (field (good, "bad"), 0);
  /* every fd the rogue sent is closed again (its connection may or may
   * not have been open at the first sample: sockets are not compared),
   * and the connections are gone: the good one's at least */
  assert_no_new_fds (p);
  fail_unless (field (p, "fds_end") < field (p, "fds_start"),
      "the consumers' connections are still open");
  node_free (p);
  node_free (good);
  node_free (rogue);
}

GST_START_TEST (test_rogue_garbage)
{
  rogue_case ("garbage", TRUE);
}

GST_END_TEST;

GST_START_TEST (test_rogue_bad_release)
{
  rogue_case ("bad-release", TRUE);
}

GST_END_TEST;

GST_START_TEST (test_rogue_flood)
{
  rogue_case ("flood", TRUE);
}

GST_END_TEST;

GST_START_TEST (test_rogue_fds_on_wrong_message)
{
  rogue_case ("fd-junk", TRUE);
}

GST_END_TEST;

GST_START_TEST (test_rogue_never_reads)
{
  /* it holds every frame it is sent and reads nothing: dropped as stuck
   * once the producer waits for a slot (consumer-timeout) */
  rogue_case ("mute", TRUE);
}

GST_END_TEST;

GST_START_TEST (test_rogue_bad_version)
{
  rogue_case ("bad-version", FALSE);
}

GST_END_TEST;

GST_START_TEST (test_rogue_bad_backend)
{
  rogue_case ("bad-backend", FALSE);
}

GST_END_TEST;

/* A consumer of another user, on an abstract socket (no file permissions
 * to stop it): refused by its credentials unless allowed-users names it,
 * or (@by_group) allowed-groups names its primary group. Needs root to
 * start the consumer as "nobody"; without, it says so and checks nothing. */
static void
other_user_case (gboolean allowed, gboolean by_group)
{
  gchar *name = g_strdup_printf ("@cudaipc-test-%d-%d%d", getpid (), allowed,
      by_group);
  gchar *saved = sock;
  struct passwd *pw = getpwnam ("nobody");
  g_autofree gchar *sink_props = NULL;
  Node *c, *p;

  if (getuid () != 0 || pw == NULL) {
    g_print ("not root, or no user nobody: access control not exercised\n");
    g_free (name);
    return;
  }
  /* nobody's primary group, by number */
  sink_props = !allowed ? g_strdup ("backend=" BACKEND) : by_group ?
      g_strdup_printf ("backend=" BACKEND " allowed-groups=%u",
      (guint) pw->pw_gid) : g_strdup ("backend=" BACKEND " allowed-users=nobody");
  sock = name;
  /* cuda: the fence page, like the slots, is an fd sent over the socket:
   * a consumer of another user reads it on its first connection (legacy
   * IPC event handles were private to the producer's user) */
  c = spawn_node ("consumer", "--as-user", "nobody", "--src",
      "reconnect=false connect-timeout=20000", NULL);
  p = spawn_node ("producer", "--frames", "30", "--clients",
      allowed ? "1" : "0", "--fps", "30", "--sink", sink_props, NULL);
  wait_node (p, 60);
  wait_node (c, 60);
  sock = saved;
  g_free (name);
  assert_exit_ok (p);
  if (allowed) {
    assert_exit_ok (c);
    fail_unless_equals_uint64 (field (c, "frames"), 30);
    fail_unless_equals_uint64 (field (c, "connects"), 1);
    fail_unless_equals_uint64 (field (c, "bad"), 0);
  } else {
    /* the consumer ends with an error naming the refusal */
    fail_unless (WIFEXITED (c->status) && WEXITSTATUS (c->status) == 1);
    fail_unless (strstr (c->err->str, "may not connect") != NULL, "%s",
        c->err->str);
    fail_unless (field (p, "warnings") >= 1);
    fail_unless_equals_uint64 (field (p, "joined"), 0);
  }
  node_free (p);
  node_free (c);
}

GST_START_TEST (test_other_user_refused)
{
  other_user_case (FALSE, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_other_user_allowed)
{
  other_user_case (TRUE, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_other_group_allowed)
{
  other_user_case (TRUE, TRUE);
}

GST_END_TEST;

static Suite *
faults_suite (void)
{
  Suite *s = suite_create ("faults-" BACKEND);
  TCase *tc = cudaipc_test_case (s, "general", 240);

  tcase_add_checked_fixture (tc, nodes_setup, nodes_teardown);
  tcase_add_test (tc, test_consumer_killed_frees_its_slots);
  tcase_add_test (tc, test_producer_killed_and_restarted);
  tcase_add_test (tc, test_producer_killed_channel);
  tcase_add_test (tc, test_producer_killed_no_reconnect);
  tcase_add_test (tc, test_producer_killed_stays_away);
  tcase_add_test (tc, test_stuck_consumer_dropped);
  tcase_add_test (tc, test_stopped_consumer_wait);
  tcase_add_test (tc, test_stopped_consumer_drop);
#ifndef CUDAIPC_TEST_GPU
  tcase_add_test (tc, test_consumer_pins_retired_rings);
#endif
  tcase_add_test (tc, test_producer_bad_metas);
  tcase_add_test (tc, test_producer_floods_new_names);
  tcase_add_test (tc, test_rogue_garbage);
  tcase_add_test (tc, test_rogue_bad_release);
  tcase_add_test (tc, test_rogue_flood);
  tcase_add_test (tc, test_rogue_fds_on_wrong_message);
  tcase_add_test (tc, test_rogue_never_reads);
  tcase_add_test (tc, test_rogue_bad_version);
  tcase_add_test (tc, test_rogue_bad_backend);
  tcase_add_test (tc, test_rogue_writes_refused);
  tcase_add_test (tc, test_other_user_refused);
  tcase_add_test (tc, test_other_user_allowed);
  tcase_add_test (tc, test_other_group_allowed);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "faults-" BACKEND,
  .suite = faults_suite,
#ifdef CUDAIPC_TEST_GPU
  .prepare = cudaipc_test_need_gpu,
#endif
};
