/* progress.c: the root's progress line while the traces are analysed.
 *
 * Every process analyses its own files but only the root prints, so each
 * other process sends the root a one-number message when it finishes a
 * file (the file's index i, or -2 - i when the file failed), and an end
 * mark (-1) after its last one.  The sends
 * are non-blocking, so no process ever waits for the root; the root polls
 * for reports between its own files and, after its last one, waits for
 * every end mark, printing as reports arrive.  That wait costs nothing: the
 * gather that follows needs every process anyway.  The messages travel on
 * a duplicate of MPI_COMM_WORLD, so they cannot match any other receive.
 * File sizes come from the shared file list: the throughput is bytes on
 * disk per second of wall time since the start.
 *
 * On a terminal the line is rewritten in place (at most every
 * THROTTLE_SECONDS); otherwise a line is printed each time another tenth
 * of the files is done, so logs get at most ten lines. */
#include "run/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ROOT 0
#define END_MARK (-1)
#define THROTTLE_SECONDS 0.1

void hta_progress_start(hta_progress *p, const hta_file_list *list, const int *owner,
                        int enabled, double started)
{
    *p = (hta_progress){.enabled = enabled, .list = list};
    if (!enabled || list->count == 0) {
        p->enabled = 0;
        return;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &p->comm);
    MPI_Comm_rank(p->comm, &p->me);
    MPI_Comm_size(p->comm, &p->n_processes);
    p->start = started;
    p->last_print = p->start - THROTTLE_SECONDS; /* the first file shows */
    if (p->me == ROOT) {
        p->tty = isatty(STDERR_FILENO);
        return;
    }
    size_t mine = 1; /* the end mark */
    for (size_t i = 0; i < list->count; i++)
        mine += owner[i] == p->me;
    /* Without room to keep the messages until they are sent, send them
     * blocking instead (below): slower only if the root is busy. */
    p->requests = malloc(mine * sizeof *p->requests);
    p->sent = malloc(mine * sizeof *p->sent);
    if (!p->requests || !p->sent) {
        free(p->requests);
        free(p->sent);
        p->requests = NULL;
        p->sent = NULL;
    }
}

static void print_line(hta_progress *p, int final)
{
    size_t total = p->list->count;
    double now = MPI_Wtime(), elapsed = now - p->start;
    double mb_per_s = elapsed > 0 ? (double)p->done_bytes / 1e6 / elapsed : 0.0;
    char failed[48] = "";
    if (p->failed)
        snprintf(failed, sizeof failed, "%zu failed%s", p->failed, p->tty ? ", " : " ");
    if (p->tty) {
        if (!final && now - p->last_print < THROTTLE_SECONDS)
            return;
        /* \033[K clears what a longer previous line left behind. */
        fprintf(stderr, "\rhta-mpi: analysed %zu/%zu traces, %s%.1f MB/s\033[K%s",
                p->done - p->failed, total, failed, mb_per_s, final ? "\n" : "");
        fflush(stderr);
        p->last_print = now;
        return;
    }
    int decile = (int)(p->done * 10 / total);
    if (decile <= p->last_decile)
        return;
    p->last_decile = decile;
    fprintf(stderr, "hta-mpi: analysed %zu/%zu traces%s%s(%zu%%), %.1f MB/s\n",
            p->done - p->failed, total, p->failed ? ", " : " ", failed, p->done * 100 / total,
            mb_per_s);
}

static void count_file(hta_progress *p, int64_t i, int failed)
{
    p->done++;
    p->failed += failed != 0;
    p->done_bytes += p->list->bytes[i];
    print_line(p, 0);
}

/* Root: takes one report (waiting for it when blocking); returns 0 when
 * there was none to take. */
static int receive_report(hta_progress *p, int blocking)
{
    int pending = 1;
    if (!blocking)
        MPI_Iprobe(MPI_ANY_SOURCE, 0, p->comm, &pending, MPI_STATUS_IGNORE);
    if (!pending)
        return 0;
    int64_t i;
    MPI_Recv(&i, 1, MPI_INT64_T, MPI_ANY_SOURCE, 0, p->comm, MPI_STATUS_IGNORE);
    if (i == END_MARK)
        p->ends++;
    else
        count_file(p, i < 0 ? -2 - i : i, i < 0);
    return 1;
}

static void send_report(hta_progress *p, int64_t i)
{
    if (!p->requests) {
        MPI_Send(&i, 1, MPI_INT64_T, ROOT, 0, p->comm);
        return;
    }
    p->sent[p->n_sent] = i;
    MPI_Isend(&p->sent[p->n_sent], 1, MPI_INT64_T, ROOT, 0, p->comm, &p->requests[p->n_sent]);
    p->n_sent++;
}

void hta_progress_file_done(hta_progress *p, size_t i, int failed)
{
    if (!p->enabled)
        return;
    if (p->me != ROOT) {
        send_report(p, failed ? -2 - (int64_t)i : (int64_t)i);
        return;
    }
    count_file(p, (int64_t)i, failed);
    while (receive_report(p, 0))
        ;
}

void hta_progress_finish(hta_progress *p)
{
    if (!p->enabled)
        return;
    if (p->me == ROOT) {
        while (p->ends < p->n_processes - 1)
            receive_report(p, 1);
        if (p->tty)
            print_line(p, 1);
    } else {
        send_report(p, END_MARK);
        if (p->requests)
            MPI_Waitall((int)p->n_sent, p->requests, MPI_STATUSES_IGNORE);
    }
    free(p->requests);
    free(p->sent);
    MPI_Comm_free(&p->comm);
    p->enabled = 0;
}
