/* model/classify.h: the kernel type of a GPU event (definitions section 3). */
#ifndef HTA_CLASSIFY_H
#define HTA_CLASSIFY_H



typedef enum hta_kernel_type {
    HTA_KT_COMPUTATION = 0,
    HTA_KT_COMMUNICATION = 1,
    HTA_KT_MEMORY = 2,
    HTA_KT_OTHER = 3,
} hta_kernel_type;

/* Kernel type of a GPU event name. */
hta_kernel_type hta_classify_kernel(const char *name);
const char *hta_kernel_type_name(hta_kernel_type type);

#endif
