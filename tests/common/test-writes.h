/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a consumer could do to memory a producer shared with it read-only
 * (a host slot, the fence page): every way a process that holds the fd
 * could change the file's bytes, tried in turn on the fd it was sent:
 *
 *   mmap      a shared mapping with PROT_WRITE, then a fill
 *   mprotect  a shared read-only mapping made writable, then a fill
 *   write     write(2) at the start
 *   pwrite    pwrite(2) at the start
 *   punch     fallocate(2) punching a hole (the range reads zero after)
 *   reopen    the file opened again read-write through /proc/self/fd,
 *             then pwrite(2)
 *
 * A way that works leaves @byte (zero for punch) in the first @size bytes
 * the way it reached. The producer seals what it sends with
 * F_SEAL_FUTURE_WRITE (docs/design.md, Trust model), which refuses every
 * one of them; without the seal every one works.
 *
 * cudaipc_test_try_writes() is for programs (rogue-consumer) as well as
 * for gst-check tests; cudaipc_test_assert_unwritable() fails a test
 * unless every way was refused, with the errno the seal gives.
 * cudaipc_test_without_future_write_seal() makes the kernel look like one
 * that has no such seal, for what the producer does there.
 */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <glib.h>

typedef enum
{
  CUDAIPC_TEST_WRITE_MMAP,
  CUDAIPC_TEST_WRITE_MPROTECT,
  CUDAIPC_TEST_WRITE_WRITE,
  CUDAIPC_TEST_WRITE_PWRITE,
  CUDAIPC_TEST_WRITE_PUNCH,
  CUDAIPC_TEST_WRITE_REOPEN,
  CUDAIPC_TEST_N_WRITES
} CudaIpcTestWriteWay;

typedef struct
{
  const gchar *how;
  gboolean wrote;
  int error;                    /* the errno where it was refused */
} CudaIpcTestWrite;

static inline gboolean
cudaipc_test_write_all (int fd, const guint8 * buf, gsize size, gboolean at)
{
  gsize done = 0;

  while (done < size) {
    ssize_t r = at ? pwrite (fd, buf + done, size - done, done) :
        write (fd, buf + done, size - done);

    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return FALSE;
    done += r;
  }
  return TRUE;
}

static inline void
cudaipc_test_write_result (CudaIpcTestWrite * r, const gchar * how,
    gboolean wrote)
{
  r->how = how;
  r->wrote = wrote;
  r->error = wrote ? 0 : errno;
}

/* Tries every way on @fd; fills @results and returns how many wrote. */
static inline guint
cudaipc_test_try_writes (int fd, gsize size, guint8 byte,
    CudaIpcTestWrite results[CUDAIPC_TEST_N_WRITES])
{
  guint8 *buf = g_malloc (size);
  gchar *path;
  guint n = 0;
  void *p;
  int rw;

  memset (buf, byte, size);

  p = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  cudaipc_test_write_result (&results[CUDAIPC_TEST_WRITE_MMAP], "mmap",
      p != MAP_FAILED);
  if (p != MAP_FAILED) {
    memset (p, byte, size);
    munmap (p, size);
  }

  p = mmap (NULL, size, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    cudaipc_test_write_result (&results[CUDAIPC_TEST_WRITE_MPROTECT],
        "mprotect", FALSE);
  } else {
    gboolean ok = mprotect (p, size, PROT_READ | PROT_WRITE) == 0;

    cudaipc_test_write_result (&results[CUDAIPC_TEST_WRITE_MPROTECT],
        "mprotect", ok);
    if (ok)
      memset (p, byte, size);
    munmap (p, size);
  }

  lseek (fd, 0, SEEK_SET);
  cudaipc_test_write_result (&results[CUDAIPC_TEST_WRITE_WRITE], "write",
      cudaipc_test_write_all (fd, buf, size, FALSE));
  cudaipc_test_write_result (&results[CUDAIPC_TEST_WRITE_PWRITE], "pwrite",
      cudaipc_test_write_all (fd, buf, size, TRUE));
  cudaipc_test_write_result (&results[CUDAIPC_TEST_WRITE_PUNCH], "punch",
      fallocate (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, size) == 0);

  path = g_strdup_printf ("/proc/self/fd/%d", fd);
  rw = open (path, O_RDWR | O_CLOEXEC);
  if (rw < 0) {
    cudaipc_test_write_result (&results[CUDAIPC_TEST_WRITE_REOPEN], "reopen",
        FALSE);
  } else {
    cudaipc_test_write_result (&results[CUDAIPC_TEST_WRITE_REOPEN], "reopen",
        cudaipc_test_write_all (rw, buf, size, TRUE));
    close (rw);
  }
  g_free (path);
  g_free (buf);

  for (guint i = 0; i < CUDAIPC_TEST_N_WRITES; i++)
    n += results[i].wrote;
  return n;
}

/* "mmap=EPERM mprotect=EACCES ... " for a message. */
static inline gchar *
cudaipc_test_writes_text (const CudaIpcTestWrite results[CUDAIPC_TEST_N_WRITES])
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < CUDAIPC_TEST_N_WRITES; i++)
    g_string_append_printf (s, "%s%s=%s", i ? " " : "", results[i].how,
        results[i].wrote ? "WROTE" : g_strerror (results[i].error));
  return g_string_free (s, FALSE);
}

#ifdef fail_unless
/* Every way refused: EPERM from the seal, EACCES for mprotect (the
 * mapping lost its right to become writable); reopen may also find no
 * /proc, which refuses nothing but proves nothing either. */
static inline void
cudaipc_test_assert_unwritable (int fd, gsize size, const gchar * what)
{
  CudaIpcTestWrite r[CUDAIPC_TEST_N_WRITES];
  guint wrote = cudaipc_test_try_writes (fd, size, 0xee, r);
  gchar *text = cudaipc_test_writes_text (r);

  g_print ("%s: %s\n", what, text);
  fail_unless (wrote == 0, "%s: %u way(s) wrote: %s", what, wrote, text);
  for (guint i = 0; i < CUDAIPC_TEST_N_WRITES; i++) {
    int want = i == CUDAIPC_TEST_WRITE_MPROTECT ? EACCES : EPERM;

    if (i == CUDAIPC_TEST_WRITE_REOPEN && r[i].error == ENOENT)
      continue;
    fail_unless (r[i].error == want, "%s: %s refused with %s, not %s", what,
        r[i].how, g_strerror (r[i].error), g_strerror (want));
  }
  g_free (text);
}
#endif

/* Makes this process's kernel look like one before Linux 5.1, which does
 * not know F_SEAL_FUTURE_WRITE: from now on an F_ADD_SEALS that asks for
 * it fails with EINVAL, adding nothing (a seccomp filter, for the rest
 * of the process: only in a test's own forked process). FALSE where the
 * filter cannot be installed. */
static inline gboolean
cudaipc_test_without_future_write_seal (void)
{
#if defined(__NR_fcntl) && G_BYTE_ORDER == G_LITTLE_ENDIAN
#define CUDAIPC_ARG_LO(i) (offsetof (struct seccomp_data, args) + 8 * (i))
  struct sock_filter code[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_fcntl, 0, 5),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, CUDAIPC_ARG_LO (1)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, F_ADD_SEALS, 0, 3),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, CUDAIPC_ARG_LO (2)),
    BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K, F_SEAL_FUTURE_WRITE, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { G_N_ELEMENTS (code), code };
#undef CUDAIPC_ARG_LO

  return prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
      prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0;
#else
  return FALSE;
#endif
}
