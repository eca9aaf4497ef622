/* parse/launcher_env.h: the rank, world size and host a recorded
 * environment names.
 *
 * Profilers that record the profiled process's environment (Nsight
 * Systems, rocprofv3's rocpd database) or its command line give it as a
 * dump of NAME=value pairs, whatever separates them (';', new lines,
 * spaces).  The rank is the first of the launchers' variables set,
 * most specific first: RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK,
 * MV2_COMM_WORLD_RANK, SLURM_PROCID; the world size likewise from
 * WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, MV2_COMM_WORLD_SIZE,
 * SLURM_NTASKS.  Nothing else of the environment is read. */
#ifndef HTA_LAUNCHER_ENV_H
#define HTA_LAUNCHER_ENV_H

#include <stddef.h>
#include <stdint.h>

/* -1 when no launcher variable holds a whole number. */
int64_t hta_env_rank(const char *env);
int64_t hta_env_world_size(const char *env);

/* The value of `HOSTNAME=text` into host (room for size), up to the next
 * ';'; unchanged when absent or too long. */
void hta_env_host(const char *env, char *host, size_t size);

#endif
