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

/// The kernel's id of the calling thread (what /proc/PID/task lists).
extern pid_t gettid(void);

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

extern int sync_file_range(int fd, __off64_t offset, __off64_t count, unsigned int flags);

/// sync_file_range(2) with SYNC_FILE_RANGE_WRITE: starts writing the range's dirty pages to the
/// disk without waiting for it (durability still needs fsync); -1 and errno on failure.
static inline int clinux_start_writeback(int fd, long long offset, long long count) {
    return sync_file_range(fd, offset, count, 2 /* SYNC_FILE_RANGE_WRITE */);
}

#include <poll.h>
#include <time.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

// Newer than Debian 12's headers (kernel 6.5+); the values are the kernel's ABI.
#define CLINUX_SO_PASSCRED 16
#define CLINUX_SO_PASSPIDFD 76
#define CLINUX_SO_PEERPIDFD 77
#define CLINUX_SCM_RIGHTS 1
#define CLINUX_SCM_CREDENTIALS 2
#define CLINUX_SCM_PIDFD 0x04
#define CLINUX_MSG_CMSG_CLOEXEC 0x40000000

/// Turns a boolean socket option of level SOL_SOCKET on (`on` 1) or off (0); -1 and errno on failure.
static inline int clinux_set_socket_option(int fd, int option, int on) {
    return setsockopt(fd, SOL_SOCKET, option, &on, sizeof on);
}

/// A pidfd for the peer of a connected AF_UNIX socket (SO_PEERPIDFD, kernel 6.5+);
/// -1 and errno on failure (ENOPROTOOPT on older kernels).
static inline int clinux_peer_pidfd(int fd) {
    int pidfd = -1;
    socklen_t length = sizeof pidfd;
    if (getsockopt(fd, SOL_SOCKET, CLINUX_SO_PEERPIDFD, &pidfd, &length) != 0) return -1;
    return pidfd;
}

// send(2), recvmsg(2) and epoll_wait(2) as plain system calls. glibc's own are thread
// cancellation points: around each call they switch the thread to asynchronous cancellation
// and back (two atomic updates, some 45 instructions a call, three calls per request on
// proctord's loop). Nothing in this project cancels a thread (no pthread_cancel), so there
// is nothing to switch. Each returns what glibc's does: the result, or -1 and errno.
static inline ssize_t clinux_send(int fd, const void *buffer, size_t length, int flags) {
    return syscall(SYS_sendto, fd, buffer, length, flags, (void *)0, (socklen_t)0);
}

static inline ssize_t clinux_recvmsg(int fd, struct msghdr *message, int flags) {
    return syscall(SYS_recvmsg, fd, message, flags);
}

/// epoll_pwait with no signal mask is epoll_wait (the one call both x86-64 and arm64 have).
static inline int clinux_epoll_wait(int epoll, struct epoll_event *events, int capacity, int timeout) {
    return (int)syscall(SYS_epoll_pwait, epoll, events, capacity, timeout, (void *)0, (size_t)8 /* the kernel's sigset_t */);
}

/// Who sent the bytes of one recvmsg, as the kernel stamped them.
struct clinux_sender {
    int has_credentials;   // 1 when SCM_CREDENTIALS came (SO_PASSCRED set)
    pid_t pid; uid_t uid; gid_t gid;
    int pidfd;             // from SCM_PIDFD (SO_PASSPIDFD set), close-on-exec; else -1
};

/// The control message after `header` in `message`, or 0 after the last: what glibc's
/// CMSG_NXTHDR checks (a header too short to step over ends the walk, as does one that would
/// pass the end of the control buffer), inline — without optimization glibc calls its
/// out-of-line `__cmsg_nxthdr`, a call a message. The buffer is the receiver's own, at most a
/// few hundred bytes: its offsets cannot overflow.
static inline struct cmsghdr *clinux_next_control_header(const struct msghdr *message, const struct cmsghdr *header) {
    if (header->cmsg_len < sizeof(struct cmsghdr)) return 0;
    size_t next = (size_t)((const unsigned char *)header - (const unsigned char *)message->msg_control)
        + CMSG_ALIGN(header->cmsg_len);
    if (next > message->msg_controllen || message->msg_controllen - next < sizeof(struct cmsghdr)) return 0;
    struct cmsghdr *following = (struct cmsghdr *)((unsigned char *)message->msg_control + next);
    if (CMSG_ALIGN(following->cmsg_len) > message->msg_controllen - next) return 0;
    return following;
}

/// recvmsg(2) on a socket with SO_PASSCRED (and SO_PASSPIDFD) set: reads at most
/// `length` bytes, all from one sender (the kernel does not merge data of different senders
/// into one read when SO_PASSCRED is set), and reports that sender. Descriptors the peer
/// passed with SCM_RIGHTS are closed at once: the caller never asked for any.
/// Returns the byte count (0 at end of file), or -1 and errno.
static inline ssize_t clinux_receive_with_sender(int fd, void *buffer, size_t length, struct clinux_sender *sender) {
    union { struct cmsghdr align; char bytes[256]; } control;
    struct iovec vector = { buffer, length };
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof control.bytes;
    sender->has_credentials = 0;
    sender->pidfd = -1;
    ssize_t count = clinux_recvmsg(fd, &message, CLINUX_MSG_CMSG_CLOEXEC);
    if (count < 0) return -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = clinux_next_control_header(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET) continue;
        size_t payload = header->cmsg_len - CMSG_LEN(0);
        if (header->cmsg_type == CLINUX_SCM_CREDENTIALS && payload >= 3 * sizeof(int)) {
            struct { pid_t pid; uid_t uid; gid_t gid; } credentials;  // struct ucred's layout
            memcpy(&credentials, CMSG_DATA(header), sizeof credentials);
            sender->has_credentials = 1;
            sender->pid = credentials.pid; sender->uid = credentials.uid; sender->gid = credentials.gid;
        } else if (header->cmsg_type == CLINUX_SCM_PIDFD && payload >= sizeof(int)) {
            int pidfd;
            memcpy(&pidfd, CMSG_DATA(header), sizeof pidfd);
            if (sender->pidfd >= 0) close(sender->pidfd);
            sender->pidfd = pidfd;
        } else if (header->cmsg_type == CLINUX_SCM_RIGHTS) {
            for (size_t offset = 0; offset + sizeof(int) <= payload; offset += sizeof(int)) {
                int passed;
                memcpy(&passed, CMSG_DATA(header) + offset, sizeof passed);
                close(passed);
            }
        }
    }
    return count;
}

/// pidfd_open(2): a descriptor that refers to process `pid` for as long as it is held
/// (close-on-exec); -1 and errno on failure.
static inline int clinux_pidfd_open(pid_t pid) {
    return (int)syscall(434 /* SYS_pidfd_open */, pid, 0);
}

/// Whether the process behind `pidfd` has exited: 1 exited, 0 alive, -1 and errno on failure.
/// A pidfd becomes readable when its process exits (poll needs no permission to signal).
static inline int clinux_pidfd_has_exited(int pidfd) {
    struct pollfd entry = { pidfd, POLLIN, 0 };
    // ppoll with a zero timeout, as a plain system call (see clinux_send): proctord asks this
    // of a session's process on every call.
    struct timespec now = { 0, 0 };
    int ready = (int)syscall(SYS_ppoll, &entry, 1, &now, (void *)0, (size_t)8 /* the kernel's sigset_t */);
    if (ready < 0) return -1;
    return ready > 0 ? 1 : 0;
}

/// Sets the effective uid and gid of the calling *thread* only (raw setresuid/setresgid:
/// glibc's wrappers change every thread). For tests that connect as another user from one
/// thread of a root process; the saved ids stay, so the thread can change back.
static inline int clinux_thread_set_effective_ids(uid_t uid, gid_t gid) {
    if (syscall(SYS_setresgid, (gid_t)-1, gid, (gid_t)-1) != 0) return -1;
    return (int)syscall(SYS_setresuid, (uid_t)-1, uid, (uid_t)-1);
}

#include <stddef.h>

/// glibc's malloc_trim(3) (<malloc.h>): gives free heap memory back to the kernel.
extern int malloc_trim(size_t pad);

#include <elf.h>
#include <sys/auxv.h>

/// Copies the GNU build id of the running executable (its `NT_GNU_BUILD_ID` note, found through
/// the program headers the kernel passed in the auxiliary vector, so no file is read) into
/// `out`; returns its length, or 0 when the executable has none or it is longer than `capacity`.
static inline size_t clinux_executable_build_id(unsigned char *out, size_t capacity) {
    const Elf64_Phdr *headers = (const Elf64_Phdr *)getauxval(AT_PHDR);
    unsigned long count = getauxval(AT_PHNUM);
    if (!headers || count == 0) return 0;
    uintptr_t bias = 0;  // where a position-independent executable was loaded
    for (unsigned long i = 0; i < count; i++) {
        if (headers[i].p_type == PT_PHDR) bias = (uintptr_t)headers - headers[i].p_vaddr;
    }
    for (unsigned long i = 0; i < count; i++) {
        if (headers[i].p_type != PT_NOTE) continue;
        size_t align = headers[i].p_align == 8 ? 8 : 4;
        const unsigned char *note = (const unsigned char *)(bias + headers[i].p_vaddr);
        const unsigned char *end = note + headers[i].p_memsz;
        while (note + sizeof(Elf64_Nhdr) <= end) {
            const Elf64_Nhdr *header = (const Elf64_Nhdr *)note;
            const unsigned char *name = note + sizeof *header;
            const unsigned char *description = name + ((header->n_namesz + align - 1) & ~(align - 1));
            if (description + header->n_descsz > end) break;
            if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                if (header->n_descsz > capacity) return 0;
                memcpy(out, description, header->n_descsz);
                return header->n_descsz;
            }
            note = description + ((header->n_descsz + align - 1) & ~(align - 1));
        }
    }
    return 0;
}

// memfd_create(2) and its seals (<sys/mman.h> and <fcntl.h> declare them only with _GNU_SOURCE);
// the values are the kernel's ABI.
#define CLINUX_MFD_CLOEXEC 0x0001U
#define CLINUX_MFD_ALLOW_SEALING 0x0002U
#define CLINUX_F_ADD_SEALS 1033
#define CLINUX_F_GET_SEALS 1034
/// F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE: the file can never change again.
#define CLINUX_F_SEAL_ALL 0x000F
#define CLINUX_SO_SNDBUFFORCE 32

/// A memory file (memfd_create(2)) that can be sealed, close-on-exec; -1 and errno on failure.
static inline int clinux_memfd_create_sealable(const char *name) {
    return (int)syscall(SYS_memfd_create, name, CLINUX_MFD_CLOEXEC | CLINUX_MFD_ALLOW_SEALING);
}

/// sendmsg(2) of no bytes and one descriptor (SCM_RIGHTS) to `address` (MSG_NOSIGNAL);
/// -1 and errno on failure. The CMSG_* macros that build the message are not visible to Swift.
static inline ssize_t clinux_send_descriptor(int fd, const void *address, socklen_t length, int descriptor) {
    union { struct cmsghdr align; char bytes[CMSG_SPACE(sizeof(int))]; } control;
    memset(&control, 0, sizeof control);
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_name = (void *)address;
    message.msg_namelen = length;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof control.bytes;
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = CLINUX_SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &descriptor, sizeof descriptor);
    return sendmsg(fd, &message, MSG_NOSIGNAL);
}

// sched_getaffinity(2)/sched_setaffinity(2) of the calling thread, on a mask of `size` bytes
// (glibc's wrappers need _GNU_SOURCE). Returns the mask's bytes the kernel filled, or -1.
static inline int clinux_get_affinity(void *mask, size_t size) {
    return (int)syscall(SYS_sched_getaffinity, 0, size, mask);
}

static inline int clinux_set_affinity(const void *mask, size_t size) {
    return (int)syscall(SYS_sched_setaffinity, 0, size, mask);
}
