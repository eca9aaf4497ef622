/* Linked into the programs of the sanitized build that start MPI
 * (hta_keeps_mpi_plugins in CMakeLists.txt), so that LeakSanitizer can name
 * what Open MPI never frees.  Open MPI unloads its plugins in MPI_Finalize,
 * before the leak check at exit; their allocations then come from
 * "<unknown module>", and only the slow unwinder, several times the CPU of
 * every sanitized process, reaches the MPI_Init frame under them.  With
 * dlclose a no-op the plugins stay mapped, the frame the fast unwinder
 * records first names the plugin's file, and tests/lsan.supp excuses it by
 * that name.  The executable exports this dlclose, which the dynamic linker
 * then binds Open MPI's calls to, ahead of the C library's. */
#include <dlfcn.h>

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
