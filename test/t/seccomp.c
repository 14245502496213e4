/*
 * seccomp.c - an LD_PRELOAD shim that puts the process, and whatever it
 * starts, under a seccomp filter refusing the memory calls the way Docker's
 * default profile does for a container without CAP_SYS_NICE: set_mempolicy,
 * get_mempolicy, mbind, move_pages and migrate_pages fail with EPERM.  With
 * NUMASCHED_SECCOMP=kill the process making one is killed instead, which
 * shows that none is made at all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define REFUSE(nr, to_action) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), (to_action), 0)

__attribute__((constructor))
static void
install_filter(void)
{
	const char *mode = getenv("NUMASCHED_SECCOMP");
	unsigned int action = mode && strcmp(mode, "kill") == 0 ?
		SECCOMP_RET_KILL_PROCESS : SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		REFUSE(__NR_set_mempolicy, 5),
		REFUSE(__NR_get_mempolicy, 4),
		REFUSE(__NR_mbind, 3),
		REFUSE(__NR_move_pages, 2),
		REFUSE(__NR_migrate_pages, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, action),
	};
	struct sock_fprog program = {sizeof(filter) / sizeof(filter[0]), filter};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
	{
		perror("seccomp shim");
		exit(1);
	}
}
