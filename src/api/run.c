/* run.c: the hta-mpi command as library calls (hta/run.h): its command
 * line into settings, and one process's whole life in the MPI run. */
#include "hta/run.h"

#include <mpi.h>
#include <stdlib.h>

#include "settings/command_line.h"
#include "diff/diff_command.h"
#include "hta/version.h"
#include "crossrank/exchange/hosts.h"
#include "crossrank/job_path/scenarios.h"
#include "model/gpu_peaks.h"
#include "run/head_start.h"
#include "run/pipeline.h"
#include "run/threads.h"

/* A --gpu-spec file that cannot be read is a usage error, found before
 * MPI starts rather than by every rank. */
static int gpu_spec_readable(const hta_settings *s, hta_error *err)
{
    hta_gpu_peaks peaks;
    const char *spec = s->analysis.gpu_spec;
    return !spec || hta_gpu_spec_read(spec, &peaks, err) == 0;
}

/* So is a --hostfile that cannot be read. */
static int hostfile_readable(const hta_settings *s, hta_error *err)
{
    hta_hostfile hf;
    if (!s->crossrank.hostfile)
        return 1;
    if (hta_hostfile_read(s->crossrank.hostfile, &hf, err))
        return 0;
    hta_hostfile_free(&hf);
    return 1;
}

/* So is a --what-if scenario that cannot be read, or one without
 * --replay. */
static int scenarios_readable(const hta_settings *s, hta_error *err)
{
    hta_scenario *sc = NULL;
    size_t n = 0;
    const char *what_if = s->crossrank.what_if;
    int ok = !what_if || hta_scenarios_parse(what_if, &sc, &n, err) == 0;
    hta_scenarios_free(sc, n);
    if (ok && what_if && !s->analysis.replay)
        ok = !hta_fail(err, "--what-if needs --replay");
    return ok;
}

hta_command_action hta_command_parse(hta_settings *s, int argc, char **argv, hta_error *err)
{
    hta_settings_free(s);
    switch (hta_parse_options(argc, argv, s, err)) {
    case HTA_CLI_RUN:
        return gpu_spec_readable(s, err) && hostfile_readable(s, err) &&
                       scenarios_readable(s, err)
                   ? HTA_COMMAND_RUN
                   : HTA_COMMAND_USAGE_ERROR;
    case HTA_CLI_HELP: return HTA_COMMAND_HELP;
    case HTA_CLI_VERSION: return HTA_COMMAND_VERSION;
    default: return HTA_COMMAND_USAGE_ERROR;
    }
}

void hta_command_usage(FILE *out)
{
    hta_print_usage(out);
}

/* A process started directly, not by mpirun or srun, is alone and sends
 * no message, yet Open MPI's singleton MPI_Init is slow: it starts a
 * helper daemon (orted) to serve as its runtime, and probes every network
 * transport it was built with (UCX, libfabric, PSM) to choose a
 * point-to-point layer.  Such a process runs isolated (no daemon) on the
 * plain ob1 layer, unless the user set either; processes of a
 * launched job keep whatever the cluster configures.  Isolated singletons
 * would all share one session directory, which the first to finish
 * removes: with several lone processes at once, another's MPI_Init then
 * failed to create it, or MPI-IO printed an error when its "sm"
 * shared-file-pointer component found its file gone.  A lone process
 * needs no session directory and hta-mpi no shared file pointer, so it
 * creates none and leaves that component out.  It talks to nobody but
 * itself, so it brings up no network transport either (btl "self", no UCX
 * one-sided layer): besides their start-up time, verbs and UCX hook the
 * process's memory calls, which the head start's thread (head_start.c)
 * makes while MPI_Init runs. */
static void prefer_quick_start_when_alone(void)
{
    if (!hta_started_alone())
        return;
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("OMPI_MCA_btl", "self", 0);
    setenv("OMPI_MCA_osc", "^ucx", 0);
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    setenv("OMPI_MCA_orte_create_session_dirs", "0", 0);
    setenv("OMPI_MCA_sharedfp", "^sm", 0);
}

int hta_command_run(hta_settings *s, int *argc, char ***argv)
{
    prefer_quick_start_when_alone();
    hta_head_start head;
    hta_head_start_begin(&head, s);
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "hta-mpi: MPI_Init failed\n");
        hta_head_start_end(&head);
        return HTA_EXIT_INTERNAL;
    }
    if (s->run.threads == 0)
        s->run.threads = hta_threads_per_process();
    int code = hta_run(s, hta_version(), &head);
    hta_head_start_end(&head);
    MPI_Finalize();
    return code;
}

int hta_command_diff(int argc, char **argv)
{
    return hta_diff_main(argc, argv, hta_version());
}
