/*
 * ns_syscall.h - the memory system calls, made directly (no libnuma), for
 * the OS binding's files alone
 */
#ifndef NS_SYSCALL_H
#define NS_SYSCALL_H

#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* Linux 5.14; glibc 2.36's headers may lack them */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static inline long
sys_set_mempolicy(int mode, const unsigned long *mask, unsigned long maxnode)
{
	return syscall(SYS_set_mempolicy, mode, mask, maxnode);
}

static inline long
sys_get_mempolicy(int *mode, unsigned long *mask, unsigned long maxnode)
{
	return syscall(SYS_get_mempolicy, mode, mask, maxnode, NULL, 0UL);
}

static inline long
sys_mbind(void *start, unsigned long length, int mode, const unsigned long *mask,
		  unsigned long maxnode)
{
	return syscall(SYS_mbind, start, length, mode, mask, maxnode, 0U);
}

static inline long
sys_move_pages(pid_t pid, unsigned long count, void **pages, const int *nodes, int *status,
			   int flags)
{
	return syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
}

/*
 * Base pages whose residency one mincore() call asks for: a window of 64 MB,
 * so that a segment of any size needs no more than 16 kB of scratch space.
 */
#define RESIDENT_WINDOW 16384

#endif							/* NS_SYSCALL_H */
