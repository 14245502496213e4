/*
 * ns_numa_maps.c - parsing /proc/PID/numa_maps
 *
 * A line is "<start> <policy> [file=...] [anon=N] [dirty=N] ... N0=<pages>
 * N1=<pages> kernelpagesize_kB=<kB>" (fs/proc/task_mmu.c, show_numa_map).
 */
#define _POSIX_C_SOURCE 200809L
#include "core/ns_numa_maps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Private memory: anonymous pages ("anon=") of a mapping no file backs.
 * Shared memory (file=/dev/zero, SYSV..., /anon_hugepage), DSM segments
 * (/dev/shm files) and files name a file; their pages are not anon.
 */
static bool
parse(const char *text, uint64_t *kb, int max_nodes, uintptr_t only_start,
	  char *policy, size_t policylen, bool private_only)
{
	const char *line = text;

	while (line && *line)
	{
		const char *end = strchr(line, '\n');
		size_t		len = end ? (size_t) (end - line) : strlen(line);
		char		buf[4096];
		char	   *save = NULL;
		char	   *word;
		char	   *rest;
		unsigned long long start;
		uint64_t	counts[64];
		int			nodes[64];
		int			n = 0;
		uint64_t	page_kb = 4;
		bool		has_file = false;
		bool		has_anon = false;

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;	/* a file= path that long: counts still come last */
		memcpy(buf, line, len);
		buf[len] = '\0';
		line = end ? end + 1 : NULL;
		if (buf[0] == '\0')
			continue;

		start = strtoull(buf, &rest, 16);
		if (rest == buf || *rest != ' ')
			return false;
		if (only_start && start != only_start)
			continue;
		word = strtok_r(rest, " ", &save);
		if (word == NULL)
			return false;
		if (only_start && policy)
			snprintf(policy, policylen, "%s", word);
		while ((word = strtok_r(NULL, " ", &save)) != NULL)
		{
			char	   *eq;

			if (strncmp(word, "file=", 5) == 0)
				has_file = true;
			else if (strncmp(word, "anon=", 5) == 0)
				has_anon = true;
			else if (strncmp(word, "kernelpagesize_kB=", 18) == 0)
				page_kb = strtoull(word + 18, NULL, 10);
			else if (word[0] == 'N' && word[1] >= '0' && word[1] <= '9' &&
					 (eq = strchr(word, '=')) != NULL && n < 64)
			{
				nodes[n] = atoi(word + 1);
				counts[n] = strtoull(eq + 1, NULL, 10);
				n++;
			}
		}
		if (private_only && (has_file || !has_anon))
			continue;
		for (int i = 0; i < n; i++)
			if (nodes[i] >= 0 && nodes[i] < max_nodes)
				kb[nodes[i]] += counts[i] * page_kb;
	}
	return true;
}

bool
ns_numa_maps_kb(const char *text, uint64_t *kb, int max_nodes,
				uintptr_t only_start, char *policy, size_t policylen)
{
	return parse(text, kb, max_nodes, only_start, policy, policylen, false);
}

bool
ns_numa_maps_private_kb(const char *text, uint64_t *kb, int max_nodes)
{
	return parse(text, kb, max_nodes, 0, NULL, 0, true);
}
