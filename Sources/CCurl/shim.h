// libcurl, Debian's libcurl4-openssl-dev. Only ProctorFleet imports this module.
//
// libcurl is loaded with dlopen when proctord first fetches (a BundleURL or StatusURL is
// configured), not linked: with its TLS, Kerberos, LDAP and SSH libraries it would add about
// 5 MiB of shared-library pages to every proctord, fleet-managed or not. The header gives the
// types and constants; the functions are called through `struct ccurl_library`, whose
// pointer the caller keeps (one per process) and passes to each wrapper below.
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: the wrappers
// give each argument type a plain signature.
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdlib.h>

struct ccurl_library {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    void (*easy_reset)(CURL *handle);
    CURLcode (*easy_perform)(CURL *handle);
    const char *(*easy_strerror)(CURLcode code);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *text);
    void (*slist_free_all)(struct curl_slist *list);
};

// libcurl's ABI 4 (libcurl.so.4) loaded and curl_global_init'ed, or NULL with `*error`
// set to dlerror()'s message. Never unloaded: call it once per process.
static inline const struct ccurl_library *ccurl_open(const char **error) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        *error = dlerror();
        return NULL;
    }
    struct ccurl_library *curl = calloc(1, sizeof *curl);
    if (!curl) {
        *error = "out of memory";
        return NULL;
    }
#define CCURL_LOAD(field, name) \
    if (!(*(void **)&curl->field = dlsym(library, name))) { *error = dlerror(); free(curl); return NULL; }
    CCURL_LOAD(global_init, "curl_global_init")
    CCURL_LOAD(easy_init, "curl_easy_init")
    CCURL_LOAD(easy_cleanup, "curl_easy_cleanup")
    CCURL_LOAD(easy_reset, "curl_easy_reset")
    CCURL_LOAD(easy_perform, "curl_easy_perform")
    CCURL_LOAD(easy_strerror, "curl_easy_strerror")
    CCURL_LOAD(easy_setopt, "curl_easy_setopt")
    CCURL_LOAD(easy_getinfo, "curl_easy_getinfo")
    CCURL_LOAD(slist_append, "curl_slist_append")
    CCURL_LOAD(slist_free_all, "curl_slist_free_all")
#undef CCURL_LOAD
    if (curl->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        *error = "curl_global_init failed";
        free(curl);
        return NULL;
    }
    return curl;
}

static inline CURLcode ccurl_setopt_long(const struct ccurl_library *curl, CURL *handle, CURLoption option, long value) {
    return curl->easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_offset(const struct ccurl_library *curl, CURL *handle, CURLoption option, curl_off_t value) {
    return curl->easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_string(const struct ccurl_library *curl, CURL *handle, CURLoption option, const char *value) {
    return curl->easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_pointer(const struct ccurl_library *curl, CURL *handle, CURLoption option, void *value) {
    return curl->easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_list(const struct ccurl_library *curl, CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl->easy_setopt(handle, option, value);
}

typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*ccurl_progress_callback)(void *context, curl_off_t downloadTotal, curl_off_t downloaded,
                                       curl_off_t uploadTotal, curl_off_t uploaded);

static inline CURLcode ccurl_setopt_data_callback(const struct ccurl_library *curl, CURL *handle, CURLoption option,
                                                  ccurl_data_callback value) {
    return curl->easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_progress_callback(const struct ccurl_library *curl, CURL *handle, ccurl_progress_callback value) {
    return curl->easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

// The CA file libcurl uses when CURLOPT_CAINFO is not set (its built-in default), or NULL.
static inline const char *ccurl_default_ca_file(const struct ccurl_library *curl, CURL *handle) {
    char *path = NULL;
    return curl->easy_getinfo(handle, CURLINFO_CAINFO, &path) == CURLE_OK ? path : NULL;
}

static inline CURLcode ccurl_getinfo_long(const struct ccurl_library *curl, CURL *handle, CURLINFO info, long *value) {
    return curl->easy_getinfo(handle, info, value);
}

static inline CURL *ccurl_easy_init(const struct ccurl_library *curl) { return curl->easy_init(); }
static inline void ccurl_easy_cleanup(const struct ccurl_library *curl, CURL *handle) { curl->easy_cleanup(handle); }
static inline void ccurl_easy_reset(const struct ccurl_library *curl, CURL *handle) { curl->easy_reset(handle); }
static inline CURLcode ccurl_easy_perform(const struct ccurl_library *curl, CURL *handle) { return curl->easy_perform(handle); }
static inline const char *ccurl_easy_strerror(const struct ccurl_library *curl, CURLcode code) { return curl->easy_strerror(code); }

static inline struct curl_slist *ccurl_slist_append(const struct ccurl_library *curl, struct curl_slist *list, const char *text) {
    return curl->slist_append(list, text);
}

static inline void ccurl_slist_free_all(const struct ccurl_library *curl, struct curl_slist *list) { curl->slist_free_all(list); }
