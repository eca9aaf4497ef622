/* tracegen_graphs.h: hta-tracegen's CUDA graph replays (tracegen_graphs.c). */
#ifndef TRACEGEN_GRAPHS_H
#define TRACEGEN_GRAPHS_H

int tracegen_graphs_main(int argc, char **argv);

#endif
