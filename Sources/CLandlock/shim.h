// Landlock's system calls and structures (linux/landlock.h, kernel ≥ 5.13), declared here because
// Debian 12's headers stop at ABI 2 and glibc has no wrappers. Names carry a clandlock_ prefix so
// they never clash with a newer <linux/landlock.h>.
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/prctl.h>

#define CLANDLOCK_SYS_CREATE_RULESET 444  /* the same number on every architecture */
#define CLANDLOCK_SYS_ADD_RULE 445
#define CLANDLOCK_SYS_RESTRICT_SELF 446
#define CLANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define CLANDLOCK_RULE_PATH_BENEATH 1
/* O_PATH, which Swift's Glibc module hides (it needs _GNU_SOURCE): a rule's directory handle. */
static const int clandlock_o_path = 010000000;

struct clandlock_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;   /* ABI 4 */
    uint64_t scoped;               /* ABI 6 */
};

struct __attribute__((packed)) clandlock_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
};

/// The highest Landlock ABI the kernel supports, or -1 with errno (ENOSYS, EOPNOTSUPP when disabled).
static inline long clandlock_abi_version(void) {
    return syscall(CLANDLOCK_SYS_CREATE_RULESET, (void *)0, (size_t)0, CLANDLOCK_CREATE_RULESET_VERSION);
}

/// A new ruleset handling `handled_access_fs`; its descriptor (O_CLOEXEC) or -1 with errno.
/// `size` lets an older kernel be given the shorter attribute it knows.
static inline int clandlock_create_ruleset(uint64_t handled_access_fs, size_t size) {
    struct clandlock_ruleset_attr attr = { .handled_access_fs = handled_access_fs };
    return (int)syscall(CLANDLOCK_SYS_CREATE_RULESET, &attr, size, 0U);
}

/// Allows `allowed_access` beneath the directory open as `parent_fd`; 0 or -1 with errno.
static inline int clandlock_add_path_rule(int ruleset_fd, uint64_t allowed_access, int parent_fd) {
    struct clandlock_path_beneath_attr attr = { .allowed_access = allowed_access, .parent_fd = parent_fd };
    return (int)syscall(CLANDLOCK_SYS_ADD_RULE, ruleset_fd, CLANDLOCK_RULE_PATH_BENEATH, &attr, 0U);
}

/// PR_SET_NO_NEW_PRIVS, which restrict_self requires of an unprivileged caller; 0 or -1 with errno.
static inline int clandlock_set_no_new_privileges(void) {
    return prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L);
}

/// Applies the ruleset to the calling thread (and, at the next fork/clone, its children);
/// 0 or -1 with errno. A thread's existing siblings are not affected: call it before
/// starting threads, or on every thread.
static inline int clandlock_restrict_self(int ruleset_fd) {
    return (int)syscall(CLANDLOCK_SYS_RESTRICT_SELF, ruleset_fd, 0U);
}

/* Restricting every thread. Up to ABI 7 landlock_restrict_self confines only the calling thread
 * (and what it creates later); threads already running — the SDK's, Dispatch's, the Swift
 * runtime's — stay unconfined. So, as glibc does for setuid(2) across threads, each running
 * thread is sent a signal whose handler makes it restrict itself, one thread at a time, until a
 * pass over /proc/self/task finds none left. Only LinuxIO/Landlock.swift calls these. */

/* The state is held by a function: Swift's importer emits static inline functions with their
 * local statics, but not a header's static variables. */
struct clandlock_broadcast_state {
    _Atomic int ruleset;
    _Atomic pid_t target;
    /* 0 while the target has not answered, 1 when it restricted itself, else -errno. */
    _Atomic int result;
    _Atomic int handler_installed;
    struct sigaction previous_action;
};

/// The calling thread's id (gettid(2); glibc 2.36 declares it, Debian 12's headers do not).
static inline pid_t clandlock_thread_id(void) { return (pid_t)syscall(SYS_gettid); }

static inline struct clandlock_broadcast_state *clandlock_broadcast(void) {
    static struct clandlock_broadcast_state state;
    return &state;
}

static void clandlock_broadcast_handler(int signal, siginfo_t *info, void *context) {
    int saved = errno;
    struct clandlock_broadcast_state *state = clandlock_broadcast();
    if (atomic_load(&state->target) == clandlock_thread_id()) {
        int result = 1;
        if (clandlock_set_no_new_privileges() != 0 || clandlock_restrict_self(atomic_load(&state->ruleset)) != 0) {
            result = -errno;
        }
        atomic_store(&state->target, 0);
        atomic_store(&state->result, result);
    } else if (state->previous_action.sa_flags & SA_SIGINFO) {
        /* Not ours (a profiler's, say): the handler that was there before gets it. */
        if (state->previous_action.sa_sigaction) state->previous_action.sa_sigaction(signal, info, context);
    } else if (state->previous_action.sa_handler != SIG_DFL && state->previous_action.sa_handler != SIG_IGN) {
        state->previous_action.sa_handler(signal);
    }
    errno = saved;
}

/// Restricts every other thread of the process with `ruleset_fd` (the caller restricts itself
/// first), using `signal`, whose handler stays installed (chaining to the previous one for
/// signals that are not its own). Returns 0, or -errno: -ETIMEDOUT when a thread did not answer
/// within `timeout_ms` (it blocks the signal), its id in `*unreached`. Call from one thread at a time.
static inline int clandlock_restrict_other_threads(int ruleset_fd, int signal, int timeout_ms, pid_t *unreached) {
    struct clandlock_broadcast_state *state = clandlock_broadcast();
    if (!atomic_exchange(&state->handler_installed, 1)) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = clandlock_broadcast_handler;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigfillset(&action.sa_mask);
        if (sigaction(signal, &action, &state->previous_action) != 0) {
            atomic_store(&state->handler_installed, 0);
            return -errno;
        }
    }
    atomic_store(&state->ruleset, ruleset_fd);
    pid_t self = clandlock_thread_id(), process = getpid();
    pid_t *done = NULL;
    size_t done_count = 0, done_capacity = 0;
    int failure = 0, found_new = 1;
    while (found_new && failure == 0) {
        found_new = 0;
        DIR *tasks = opendir("/proc/self/task");
        if (tasks == NULL) { failure = -errno; break; }
        struct dirent *entry;
        while (failure == 0 && (entry = readdir(tasks)) != NULL) {
            pid_t tid = (pid_t)atoi(entry->d_name);
            if (tid <= 0 || tid == self) continue;
            int seen = 0;
            for (size_t i = 0; i < done_count && !seen; i++) seen = done[i] == tid;
            if (seen) continue;
            found_new = 1;
            if (done_count == done_capacity) {
                size_t capacity = done_capacity ? done_capacity * 2 : 64;
                pid_t *grown = realloc(done, capacity * sizeof *done);
                if (grown == NULL) { failure = -ENOMEM; break; }
                done = grown;
                done_capacity = capacity;
            }
            done[done_count++] = tid;
            atomic_store(&state->result, 0);
            atomic_store(&state->target, tid);
            if (syscall(SYS_tgkill, process, tid, signal) != 0) {
                int error = errno;
                atomic_store(&state->target, 0);
                if (error == ESRCH) continue;   /* it ended meanwhile */
                failure = -error;
                break;
            }
            struct timespec pause = { .tv_sec = 0, .tv_nsec = 50000 };
            for (long waited_us = 0; atomic_load(&state->result) == 0; waited_us += 50) {
                if (waited_us >= (long)timeout_ms * 1000) {
                    /* Cleared first, so an answer that comes late does nothing. */
                    if (atomic_exchange(&state->target, 0) != 0) {
                        if (unreached) *unreached = tid;
                        failure = -ETIMEDOUT;
                    }
                    break;
                }
                nanosleep(&pause, NULL);
            }
            if (failure == 0 && atomic_load(&state->result) < 0) failure = atomic_load(&state->result);
        }
        closedir(tasks);
    }
    free(done);
    return failure;
}
