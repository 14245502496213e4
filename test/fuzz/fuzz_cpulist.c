/*
 * fuzz_cpulist.c - libFuzzer target for the CPU list parser
 *
 * Whatever the input, parsing must not crash, and a list that parses must
 * format back to a text that parses to the same set.
 */
#include "core/ns_cpuset.h"

#include <stdlib.h>
#include <string.h>

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ns_cpuset set,
				again;
	static char text[65536];
	char		err[128];

	if (!ns_cpuset_parse((const char *) data, size, NS_MAX_CPUS, &set, err, sizeof(err)))
		return 0;
	if (ns_cpuset_format(&set, text, sizeof(text)) >= sizeof(text))
		return 0;
	if (!ns_cpuset_parse(text, strlen(text), NS_MAX_CPUS, &again, err, sizeof(err)) ||
		!ns_cpuset_equal(&set, &again))
		abort();
	return 0;
}
