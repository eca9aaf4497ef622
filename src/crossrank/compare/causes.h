/* crossrank/compare/causes.h: why a rank arrived late, the one list of causes
 * that /stragglers and /delay_costs name and the summary repeats
 * (crossrank/compare/causes.c, docs/definitions.md, Causes of lateness). */
#ifndef HTA_CAUSES_H
#define HTA_CAUSES_H

typedef enum {
    HTA_CAUSE_NONE,
    HTA_CAUSE_COMPUTE,
    HTA_CAUSE_SLOWER_GPU,
    HTA_CAUSE_CPU_LAUNCH,
    HTA_CAUSE_DATA_LOADING,
    HTA_CAUSE_COMMUNICATION,
    HTA_CAUSE_IDLE,
    HTA_CAUSE_OTHER,
    HTA_N_CAUSES
} hta_cause;

/* The cause's name in the tables ("" for none). */
const char *hta_cause_name(hta_cause c);

/* The cause in words, for the reasons and the summary. */
const char *hta_cause_text(hta_cause c);

/* The cause a table names; HTA_N_CAUSES for a name not in the list. */
hta_cause hta_cause_named(const char *name);

/* The cause a step part (crossrank/compare/step_parts.h) stands for: none for the
 * wait for peers, which is what lateness causes, not why. */
hta_cause hta_cause_of_step_part(int part);

/* c, or slower GPU when c is compute and the rank's GEMMs run slower
 * than the median rank's (crossrank/compare/stragglers.c). */
hta_cause hta_cause_refined(hta_cause c, int slower_gpu);

#endif
