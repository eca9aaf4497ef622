/* tracegen_pipeline.h: hta-tracegen's pipeline-parallel layout
 * (tracegen_pipeline.c), entered when the arguments hold --pp. */
#ifndef TRACEGEN_PIPELINE_H
#define TRACEGEN_PIPELINE_H

int tracegen_pipeline_main(int argc, char **argv);

#endif
