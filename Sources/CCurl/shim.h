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
#include <pthread.h>
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
    CURLSH *(*share_init)(void);
    CURLSHcode (*share_setopt)(CURLSH *share, CURLSHoption option, ...);
    // The process's share (ccurl_open): TLS sessions and resolved names, for every fetcher.
    CURLSH *share;
    // The share's locks, one per kind of data, for fetchers on different threads.
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
};

// libcurl calls these around each use of shared data; plain mutexes, as its documentation's
// example does. `context` is the library's `share_locks`.
static inline void ccurl_share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *context) {
    (void)handle; (void)access;
    pthread_mutex_lock(&((pthread_mutex_t *)context)[data]);
}

static inline void ccurl_share_unlock(CURL *handle, curl_lock_data data, void *context) {
    (void)handle;
    pthread_mutex_unlock(&((pthread_mutex_t *)context)[data]);
}

// A share of TLS sessions (a new connection to a server resumes the last session instead of a
// full handshake) and of the DNS cache. Not the connection cache: libcurl does not support
// sharing connections between threads that transfer at the same time; each handle keeps its own.
static inline CURLSH *ccurl_make_share(struct ccurl_library *curl) {
    CURLSH *share = curl->share_init();
    if (!share) return NULL;
    for (int data = 0; data < CURL_LOCK_DATA_LAST; data++) pthread_mutex_init(&curl->share_locks[data], NULL);
    if (curl->share_setopt(share, CURLSHOPT_USERDATA, curl->share_locks) != CURLSHE_OK
        || curl->share_setopt(share, CURLSHOPT_LOCKFUNC, ccurl_share_lock) != CURLSHE_OK
        || curl->share_setopt(share, CURLSHOPT_UNLOCKFUNC, ccurl_share_unlock) != CURLSHE_OK
        || curl->share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK
        || curl->share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK) {
        return NULL;  // never freed: made once per process
    }
    return share;
}

// libcurl's ABI 4 (libcurl.so.4) loaded and curl_global_init'ed, with its share made, or NULL with `*error`
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
    CCURL_LOAD(share_init, "curl_share_init")
    CCURL_LOAD(share_setopt, "curl_share_setopt")
#undef CCURL_LOAD
    if (curl->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        *error = "curl_global_init failed";
        free(curl);
        return NULL;
    }
    if (!(curl->share = ccurl_make_share(curl))) {
        *error = "curl_share_init failed";
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

static inline CURLcode ccurl_getinfo_long(const struct ccurl_library *curl, CURL *handle, CURLINFO info, long *value) {
    return curl->easy_getinfo(handle, info, value);
}

// A new easy handle using the process's share.
static inline CURL *ccurl_easy_init(const struct ccurl_library *curl) {
    CURL *handle = curl->easy_init();
    if (handle && curl->easy_setopt(handle, CURLOPT_SHARE, curl->share) != CURLE_OK) {
        curl->easy_cleanup(handle);
        return NULL;
    }
    return handle;
}
static inline void ccurl_easy_cleanup(const struct ccurl_library *curl, CURL *handle) { curl->easy_cleanup(handle); }
static inline void ccurl_easy_reset(const struct ccurl_library *curl, CURL *handle) { curl->easy_reset(handle); }
static inline CURLcode ccurl_easy_perform(const struct ccurl_library *curl, CURL *handle) { return curl->easy_perform(handle); }
static inline const char *ccurl_easy_strerror(const struct ccurl_library *curl, CURLcode code) { return curl->easy_strerror(code); }

static inline struct curl_slist *ccurl_slist_append(const struct ccurl_library *curl, struct curl_slist *list, const char *text) {
    return curl->slist_append(list, text);
}

static inline void ccurl_slist_free_all(const struct ccurl_library *curl, struct curl_slist *list) { curl->slist_free_all(list); }
