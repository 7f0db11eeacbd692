{{! The capsule table's layout: the same text in the module and in the
    consumer header, so both sides agree by construction. }}
#ifndef CUBIND_DRIVER_CAPI_TYPES
#define CUBIND_DRIVER_CAPI_TYPES
/* Bump when the layout of these two structs changes. */
#define CUBIND_DRIVER_CAPI_VERSION 1
/* The capsule's name; also the attribute cubind.driver._C_API. */
#define CUBIND_DRIVER_CAPI_NAME "cubind.driver._C_API"
/* What an entry point returns when it raised a Python exception ("except
 * ?CUBIND_DRIVER_CAPI_SENTINEL": the driver may return this value too, so
 * check PyErr_Occurred() when you get it). */
#define CUBIND_DRIVER_CAPI_SENTINEL CUDA_ERROR_NOT_FOUND

typedef struct {
    const char *name;       /* public name: "cuCtxCreate" */
    const char *signature;  /* cubind's ABI signature string (gen/abi/abi.h) */
    void (*fn)(void);       /* the entry point, with the C prototype cuda.h gives `name` */
} cubind_driver_capi_entry;

typedef struct {
    unsigned version;       /* CUBIND_DRIVER_CAPI_VERSION */
    unsigned entry_size;    /* sizeof(cubind_driver_capi_entry) */
    unsigned long long cuda_version; /* CUDA_VERSION of the header the module was generated from */
    size_t nentries;
    const cubind_driver_capi_entry *entries;
} cubind_driver_capi;
#endif
