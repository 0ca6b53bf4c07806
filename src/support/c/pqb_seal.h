/*
 * pqb_seal.h - after the instance library is loaded, the tool process
 * refuses to create executable memory: mmap, mprotect and pkey_mprotect
 * with PROT_EXEC fail with EPERM, and so does every system call made
 * through another architecture's entry (i386 int 0x80, x32), which would
 * get around the numbers checked here. Code the library brings is mapped by
 * the loader before this; code it would write, decrypt or patch in later
 * cannot run. Installed with no_new_privs, it binds the library's threads
 * and children too, and cannot be lifted.
 *
 * A first filter goes on before the library is loaded, so it binds the
 * library's constructors too: no file may be opened for writing (open,
 * openat, creat; openat2, whose flags a filter cannot read, answers
 * ENOSYS). A measuring tool writes only to the descriptors pqbench gave it,
 * and the one file a process may write over its own read-only pages with,
 * /proc/self/mem, cannot be opened to write.
 *
 * Not installed under Valgrind (its translator maps the code it runs) and
 * refused by user-mode emulators (qemu-user answers EINVAL, as its own
 * translator needs the same): the tool then says so on its results channel.
 */
#ifndef PQB_SEAL_H
#define PQB_SEAL_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define PQB_SEAL_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define PQB_SEAL_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef __NR_openat2
#define __NR_openat2 437
#endif

#ifndef __NR_pkey_mprotect
#define __NR_pkey_mprotect -1
#endif

static int pqb_seal_install(struct sock_filter *f, unsigned short len)
{
    struct sock_fprog prog;
    prog.len = len;
    prog.filter = f;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return errno;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return errno;
    return 0;
}

#define PQB_OPEN_WRITES (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)

/* Before loading: opening a file to write fails with EPERM. 0 when
 * installed, else an errno value (ENOSYS: no filter for this architecture). */
static int pqb_seal_writes(void)
{
#ifdef PQB_SEAL_ARCH
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PQB_SEAL_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_creat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        /* open(path, flags, mode): flags are the second argument. */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PQB_OPEN_WRITES, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        /* openat(dir, path, flags, mode): flags are the third argument. */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PQB_OPEN_WRITES, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    return pqb_seal_install(f, (unsigned short)(sizeof f / sizeof f[0]));
#else
    return ENOSYS;
#endif
}

/* After loading: executable memory cannot be made. 0 when installed, else
 * an errno value (ENOSYS: no filter for this architecture). */
static int pqb_seal_exec_mappings(void)
{
#ifdef PQB_SEAL_ARCH
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PQB_SEAL_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
        /* x32 system calls carry bit 30. */
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)__NR_pkey_mprotect, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* prot is the third argument of all three. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    return pqb_seal_install(f, (unsigned short)(sizeof f / sizeof f[0]));
#else
    return ENOSYS;
#endif
}

#endif
