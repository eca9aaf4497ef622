/* results_file.c: checks, temporary name, publication (see
 * output/results_file.h).  A probe file rather than access(2) tests the
 * directory: creating one also fails for root on a read-only file system
 * and for a "directory" that is a file. */
#include "output/results_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROOT 0

/* Creates an empty file beside the output and puts its path in probe. */
static int create_probe(const char *output, char probe[PATH_MAX], hta_error *err)
{
    char *dir = strdup(output);
    if (!dir)
        return hta_fail(err, "out of memory");
    char *slash = strrchr(dir, '/');
    const char *d = slash ? (slash == dir ? "/" : (*slash = '\0', dir)) : ".";
    snprintf(probe, PATH_MAX, "%s/.hta-mpi-probe.%ld", d, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
    int rc = fd < 0 ? hta_fail(err, "%s: cannot write to directory %s: %s", output, d,
                               strerror(errno))
                    : 0;
    if (fd >= 0)
        close(fd);
    free(dir);
    return rc;
}

int hta_results_file_check(const char *output, int force, hta_error *err)
{
    struct stat st;
    if (stat(output, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return hta_fail(err, "%s: is a directory", output);
        if (!force)
            return hta_fail(err, "%s: already exists (use --force to overwrite)", output);
    }
    char probe[PATH_MAX];
    if (create_probe(output, probe, err))
        return -1;
    unlink(probe);
    return 0;
}

/* Every process writes its own rows into the results file, so the output
 * directory must be the same directory for all of them: a node-local /tmp
 * in a multi-node job, or a relative path under different working
 * directories, would otherwise fail only after all the work (or leave a
 * collective open waiting).  The root leaves a probe file there; every
 * process must see it under the same path. */
int hta_results_file_check_shared(const char *output, hta_error *err)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char probe[PATH_MAX] = "";
    int failed = 0;
    if (me == ROOT) {
        hta_error unused;
        failed = create_probe(output, probe, &unused) != 0;
    }
    MPI_Bcast(probe, PATH_MAX, MPI_CHAR, ROOT, MPI_COMM_WORLD);
    int first_blind = failed || access(probe, W_OK) == 0 ? INT_MAX : me;
    MPI_Allreduce(MPI_IN_PLACE, &first_blind, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (me != ROOT)
        return first_blind == INT_MAX ? 0 : -1;
    unlink(probe);
    if (failed)
        return hta_fail(err, "%s: cannot create a file beside it", output);
    if (first_blind != INT_MAX)
        return hta_fail(err, "%s: process %d does not see the output directory: every "
                             "process writes into the results file, so it must be on a "
                             "file system they all share",
                        output, first_blind);
    return 0;
}

char *hta_results_file_temporary_name(const char *output)
{
    size_t len = strlen(output) + 64;
    char *dir_copy = strdup(output), *base_copy = strdup(output);
    char *tmp = malloc(len);
    if (dir_copy && base_copy && tmp)
        snprintf(tmp, len, "%s/.%s.tmp.%ld", dirname(dir_copy), basename(base_copy),
                 (long)getpid());
    free(dir_copy);
    free(base_copy);
    return tmp;
}

/* Synced once the file is complete (the root's part and the in-place
 * tables, written through MPI-IO, whose close promises nothing about the
 * disk), so that the rename never exposes an incomplete file, even after a
 * power cut. */
int hta_results_file_publish(const char *tmp_path, const char *output, hta_error *err)
{
    int rc = 0;
    int fd = open(tmp_path, O_RDONLY);
    if (fd < 0 || fsync(fd) != 0)
        rc = hta_fail(err, "%s: cannot write the results file: %s", output, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (rc == 0 && rename(tmp_path, output) != 0)
        rc = hta_fail(err, "%s: cannot rename the finished results file into place", output);
    if (rc)
        unlink(tmp_path);
    return rc;
}

void hta_results_file_discard(const char *tmp_path)
{
    if (tmp_path)
        unlink(tmp_path);
}
