// Landlock's system calls and structures (linux/landlock.h, kernel ≥ 5.13), declared here because
// Debian 12's headers stop at ABI 2 and glibc has no wrappers. Names carry a clandlock_ prefix so
// they never clash with a newer <linux/landlock.h>.
#include <stdint.h>
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
