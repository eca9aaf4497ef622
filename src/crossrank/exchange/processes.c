/* processes.c: collectives over MPI_COMM_WORLD, or copies for a process
 * alone (see crossrank/exchange/processes.h). */
#include "crossrank/exchange/processes.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

hta_processes hta_processes_of_job(void)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    hta_processes p = {.me = 0, .n = 1, .mpi = initialized && !finalized};
    if (p.mpi) {
        MPI_Comm_rank(MPI_COMM_WORLD, &p.me);
        MPI_Comm_size(MPI_COMM_WORLD, &p.n);
    }
    return p;
}

int hta_processes_any(const hta_processes *p, int failed)
{
    if (p->mpi)
        MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return failed;
}

void hta_processes_allgather_int(const hta_processes *p, int v, int *all)
{
    if (p->mpi)
        MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    else
        all[0] = v;
}

void hta_processes_allgatherv(const hta_processes *p, const void *data, int len, char *all,
                              const int *lens, const int *offsets)
{
    if (p->mpi)
        MPI_Allgatherv(data, len, MPI_BYTE, all, lens, offsets, MPI_BYTE, MPI_COMM_WORLD);
    else if (len > 0)
        memcpy(all + offsets[0], data, (size_t)len);
}

void hta_processes_sum(const hta_processes *p, int64_t *v, size_t n)
{
    if (p->mpi)
        MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
}

void hta_processes_min(const hta_processes *p, int64_t *v, size_t n)
{
    if (p->mpi)
        MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
}

int hta_processes_displacements(const int *counts, int *displs, int n)
{
    long long total = 0;
    for (int q = 0; q < n; q++) {
        displs[q] = total <= INT_MAX ? (int)total : INT_MAX;
        total += counts[q];
    }
    return total > INT_MAX ? -1 : 0;
}

void hta_processes_alltoall_int(const hta_processes *p, const int *send, int *recv)
{
    if (p->mpi)
        MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
    else
        recv[0] = send[0];
}

void hta_processes_alltoallv(const hta_processes *p, const void *send, const int *counts,
                             const int *displs, void *recv, const int *recv_counts,
                             const int *recv_displs, size_t size)
{
    if (!p->mpi) {
        if (counts[0] > 0)
            memcpy((char *)recv + (size_t)recv_displs[0] * size,
                   (const char *)send + (size_t)displs[0] * size, (size_t)counts[0] * size);
        return;
    }
    MPI_Datatype type;
    MPI_Type_contiguous((int)size, MPI_BYTE, &type);
    MPI_Type_commit(&type);
    MPI_Alltoallv(send, counts, displs, type, recv, recv_counts, recv_displs, type,
                  MPI_COMM_WORLD);
    MPI_Type_free(&type);
}

void hta_processes_reduce(const hta_processes *p, void *v, size_t n, size_t size,
                          MPI_User_function *fn)
{
    if (!p->mpi)
        return;
    MPI_Datatype type;
    MPI_Op op;
    MPI_Type_contiguous((int)size, MPI_BYTE, &type);
    MPI_Type_commit(&type);
    MPI_Op_create(fn, 1, &op);
    MPI_Allreduce(MPI_IN_PLACE, v, (int)n, type, op, MPI_COMM_WORLD);
    MPI_Op_free(&op);
    MPI_Type_free(&type);
}

/* The root: every other process's packed tables, merged in process order
 * after its own (which came first, moved). */
static int merge_gathered(const hta_processes *p, hta_tableset *into, const char *data,
                          const int *lens, const int *offsets, hta_error *err)
{
    int rc = 0;
    for (int q = 0; q < p->n && rc == 0; q++)
        if (q != HTA_ROOT)
            rc = hta_tableset_merge(into, data + offsets[q], (size_t)lens[q], err);
    return rc;
}

int hta_processes_gather_tables(const hta_processes *p, hta_tableset *mine, hta_tableset *into,
                                hta_error *err)
{
    int root = p->me == HTA_ROOT;
    hta_buf packed = {0};
    int failed = !root && (hta_tableset_pack(mine, &packed) || packed.len > INT_MAX);
    int len = failed ? 0 : (int)packed.len;
    int *lens = NULL, *offsets = NULL;
    char *data = NULL;
    if (root) {
        lens = calloc((size_t)p->n, sizeof *lens);
        offsets = calloc((size_t)p->n, sizeof *offsets);
        failed = !lens || !offsets;
    }
    if (p->mpi)
        MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, HTA_ROOT, MPI_COMM_WORLD);
    long long total = 0;
    for (int q = 0; root && lens && offsets && q < p->n; q++) {
        offsets[q] = (int)total;
        total += lens[q];
    }
    if (root) {
        failed |= total > INT_MAX;
        data = malloc(total > 0 && total <= INT_MAX ? (size_t)total : 1);
    }
    if (p->mpi)
        MPI_Gatherv(packed.data, len, MPI_BYTE, data, lens, offsets, MPI_BYTE, HTA_ROOT,
                    MPI_COMM_WORLD);
    hta_buf_free(&packed);
    int rc = failed ? hta_fail(err, "result tables too large to gather") : 0;
    if (root && rc == 0 && hta_tableset_move_rows(into, mine))
        rc = hta_fail(err, "out of memory gathering the result tables");
    if (root && rc == 0)
        rc = merge_gathered(p, into, data, lens, offsets, err);
    free(lens);
    free(offsets);
    free(data);
    return rc;
}

int hta_processes_exchange_tables(const hta_processes *p, hta_tableset *parts,
                                  hta_tableset *into, hta_error *err)
{
    size_t np = (size_t)p->n;
    int *counts = calloc(4 * np, sizeof *counts);
    hta_buf packed = {0};
    int failed = !counts;
    for (size_t q = 0; q < np; q++) {
        size_t before = packed.len;
        failed = failed || hta_tableset_pack(&parts[q], &packed) != 0 ||
                 packed.len - before > INT_MAX || packed.len > INT_MAX;
        if (!failed)
            counts[q] = (int)(packed.len - before);
        hta_tableset_free(&parts[q]);
    }
    failed = hta_processes_any(p, failed);
    int *displs = counts + np, *recv_counts = counts + 2 * np, *recv_displs = counts + 3 * np;
    if (!failed)
        hta_processes_alltoall_int(p, counts, recv_counts);
    failed = failed || hta_processes_displacements(counts, displs, p->n) ||
             hta_processes_displacements(recv_counts, recv_displs, p->n);
    long long received = 0;
    for (size_t q = 0; !failed && q < np; q++)
        received += recv_counts[q];
    char *data = failed ? NULL : malloc(received > 0 ? (size_t)received : 1);
    failed = hta_processes_any(p, failed || !data);
    if (!failed)
        hta_processes_alltoallv(p, packed.data, counts, displs, data, recv_counts, recv_displs, 1);
    for (size_t q = 0; !failed && q < np; q++)
        failed = hta_tableset_merge(into, data + recv_displs[q], (size_t)recv_counts[q], err) != 0;
    free(data);
    free(counts);
    hta_buf_free(&packed);
    if (hta_processes_any(p, failed))
        return err->text[0] ? -1 : hta_fail(err, "out of memory exchanging tables");
    return 0;
}
