// Linux interfaces that Swift's Glibc module does not expose (they need _GNU_SOURCE,
// and defining it here would clash with Glibc's own view of the same headers), as
// small inline functions with plain C types.
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/eventfd.h>

extern int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags);

/// The peer's credentials of a connected AF_UNIX socket (SO_PEERCRED); -1 and errno on failure.
static inline int clinux_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct { pid_t pid; uid_t uid; gid_t gid; } cred;  // struct ucred's layout
    socklen_t length = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, 17 /* SO_PEERCRED */, &cred, &length) != 0) return -1;
    *pid = cred.pid; *uid = cred.uid; *gid = cred.gid;
    return 0;
}

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC, not collecting the peer address.
static inline int clinux_accept_nonblocking(int fd) {
    return accept4(fd, 0, 0, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

extern int pipe2(int fds[2], int flags);

/// pipe2(2) with O_CLOEXEC on both ends.
static inline int clinux_pipe_cloexec(int fds[2]) {
    return pipe2(fds, 02000000 /* O_CLOEXEC */);
}

#include <sys/file.h>

/// flock(2); Swift sees only `struct flock` under that name.
static inline int clinux_flock(int fd, int operation) {
    return flock(fd, operation);
}
