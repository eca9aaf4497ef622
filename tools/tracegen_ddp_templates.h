/* tracegen_ddp_templates.h: the Kineto layout of every event the DDP job
 * writes (tracegen_ddp_templates.c), as tracegen_writer.h templates. */
#ifndef TRACEGEN_DDP_TEMPLATES_H
#define TRACEGEN_DDP_TEMPLATES_H

typedef enum {
    TPL_HEADER,
    TPL_TRAILER,
    TPL_SEPARATOR,
    TPL_ANNOTATION,
    TPL_CPU_OP,
    TPL_COMM_OP,
    TPL_RUNTIME,
    TPL_FLOW_START,
    TPL_FLOW_FINISH,
    TPL_KERNEL,
    TPL_NCCL_KERNEL,
    TPL_MEMORY,
    TPL_META_STR,
    TPL_META_INT,
    TPL_TRACE_SPAN,
    TPL_ITERATION_START,
    TPL_WINDOW_END,
    TPL_COUNT
} tg_template_id;

/* Pretty (Kineto) layout; holes: $d integer, $s verbatim string, $f fixed6. */
extern const char *const TEMPLATE_SOURCE[TPL_COUNT];

#endif
