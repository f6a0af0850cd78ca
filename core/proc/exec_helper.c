/* codebot-exec: how codebot starts a child process (Linux).
 *
 * Between fork and exec a Python child of a threaded process must not run Python, so every
 * step codebot needs there is done by this small program, which then execs the real command
 * (same pid, so the caller's process handle, process group and signals are unchanged):
 *
 *   --parent PID        SIGKILL this process when its parent dies (PR_SET_PDEATHSIG); exit at
 *                       once if the parent is already gone (it is no longer PID).
 *   --announce FD:G:T   write {"pid":..,"ticks":..,"grace":G,"term":T} to FD, then close it
 *                       (the reaper of mcpbridge/transport/reaper.py learns of the process).
 *   --sandbox           confine what follows (all of it or nothing: any step that fails ends
 *                       the program with exit 125 and a message, never an unconfined run):
 *                       a new user namespace (no capability outside it, root included),
 *                       no_new_privs, a seccomp filter (no AF_UNIX sockets, no io_uring,
 *                       native system calls only), and Landlock: read and execute anywhere,
 *                       write only beneath --write paths (and /dev/null and friends).
 *   --write PATH        writable beneath PATH (repeatable; a missing PATH is skipped).
 *   --protect PATH      read-only even beneath a --write path (a bind mount in a private mount
 *                       namespace: git directories, .codebot, codebot's own files); a mount
 *                       point cannot be renamed or removed either (EBUSY); repeatable.
 *   --hide PATH         hidden: an empty read-only tmpfs over a directory, /dev/null (bound
 *                       read-only) over anything else, in the private mount namespace
 *                       (credentials: ~/.ssh, ~/.aws, ...); repeatable; a missing PATH is skipped.
 *   --pin PATH          a directory bound onto itself (still writable), in the same mount
 *                       namespace: a mount point cannot be renamed or removed, so the folders
 *                       above a protected or hidden path cannot be moved away; repeatable,
 *                       done first.
 *   --no-network        a new, empty network namespace (its own loopback, up; nothing else).
 *   --proxy PORT:PATH   with --no-network: a forwarder listens on 127.0.0.1:PORT inside that
 *                       namespace and relays each connection to the Unix socket PATH (codebot's
 *                       domain proxy, outside: a filesystem socket crosses network namespaces).
 *                       It is forked before the seccomp filter (which forbids the command any
 *                       AF_UNIX socket) and before Landlock (so the command cannot ptrace it),
 *                       holds no descriptor of the command's, and dies with the command.
 *   --probe             print what this kernel supports, as JSON, and exit.
 *   -- COMMAND [ARG]... what to exec (PATH is searched).
 *
 * Exit status: the command's own, or 125 (this program failed; the reason is on stderr),
 * 126 (the command cannot be executed), 127 (the command was not found).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAIL 125
#define MAX_PATHS 256
#define PROXY_MAX_CONNECTIONS 64 /* at once; more wait in the listen backlog */
#define PROXY_BUFFER 65536       /* per direction of one connection */
#define PROXY_IDLE_MS 600000     /* a connection with nothing moving either way for 10 min ends */
#define PROXY_PARENT_CHECK_MS 100 /* how soon the forwarder notices the command is gone */

/* Landlock's ABI, spelled out here: the build machine's headers may predate it. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_V1 ((1ULL << 13) - 1) /* execute .. make_sym */
#define LL_FS_FILE (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */
#define LL_MIN_ABI 3 /* refer (no hard link out) and truncate (no truncation outside) */

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

static const char *const DEVICES[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                      "/dev/urandom"};

static int die(const char *what, int err) {
    fprintf(stderr, "codebot-exec: %s: %s\n", what, strerror(err));
    exit(FAIL);
}

static int landlock_abi(void) {
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

static void write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) die(path, errno);
    size_t len = strlen(text);
    if (write(fd, text, len) != (ssize_t)len) die(path, errno);
    close(fd);
}

/* A user namespace mapping us to ourselves (root stays uid 0 inside, with no capability
 * outside), plus the network and mount namespaces asked for, created with it. */
static int enter_namespaces(int flags) {
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER | flags) != 0) return errno;
    char map[64];
    write_file("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    write_file("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    write_file("/proc/self/gid_map", map);
    return 0;
}

static int loopback_up(void) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    int err = 0;
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0) err = errno;
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (!err && ioctl(fd, SIOCSIFFLAGS, &ifr) != 0) err = errno;
    close(fd);
    return err;
}

/* One connection: relay between the client C (TCP, inside) and the proxy's Unix socket. Each
 * direction has one buffer; a side is read only while the buffer towards the other is empty, so
 * nothing blocks and memory stays bounded; a side's end of stream is passed on as a half-close. */
static void relay(int c, const char *path) {
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, path, strlen(path));
    int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (u < 0 || connect(u, (struct sockaddr *)&addr, sizeof addr) != 0) {
        static const char gone[] =
            "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n"
            "Content-Length: 50\r\n\r\nsandbox: codebot's network proxy is not running.\n";
        ssize_t ignored = write(c, gone, sizeof gone - 1);
        (void)ignored;
        _exit(0);
    }
    int fds[2] = {c, u};
    static char buf[2][PROXY_BUFFER]; /* buf[i]: read from fds[i], to write to fds[1 - i] */
    size_t len[2] = {0, 0}, off[2] = {0, 0};
    int eof[2] = {0, 0};
    for (int i = 0; i < 2; i++) fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    while (!(eof[0] && eof[1] && len[0] == 0 && len[1] == 0)) {
        struct pollfd p[2];
        for (int i = 0; i < 2; i++) {
            p[i].events = (short)((!eof[i] && len[i] == 0 ? POLLIN : 0) |
                                  (len[1 - i] > 0 ? POLLOUT : 0));
            p[i].fd = p[i].events ? fds[i] : -1; /* nothing to do there: no hang-up spin */
            p[i].revents = 0;
        }
        int n = poll(p, 2, PROXY_IDLE_MS);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (p[i].revents & POLLOUT) { /* drain what the other side sent */
                ssize_t w = write(fds[i], buf[1 - i] + off[1 - i], len[1 - i] - off[1 - i]);
                if (w < 0 && errno != EAGAIN && errno != EINTR) _exit(0);
                if (w > 0) off[1 - i] += (size_t)w;
                if (off[1 - i] == len[1 - i]) {
                    len[1 - i] = off[1 - i] = 0;
                    if (eof[1 - i]) shutdown(fds[i], SHUT_WR);
                }
            }
            if (p[i].revents & (POLLIN | POLLHUP | POLLERR) && !eof[i] && len[i] == 0) {
                ssize_t r = read(fds[i], buf[i], sizeof buf[i]);
                if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
                if (r <= 0) {
                    eof[i] = 1;
                    shutdown(fds[1 - i], SHUT_WR);
                    if (r < 0) _exit(0); /* a reset: the other side learns it by our exit */
                } else {
                    len[i] = (size_t)r;
                }
            }
        }
    }
    _exit(0);
}

/* The forwarder (see --proxy): bound and listening before the command starts, so its first
 * connection never races it; a child of the command (same pid as this program after exec)
 * that ends when the command does (it checks; and its process group is killed with it). */
static void forwarder(const char *spec) {
    char *end;
    long port = strtol(spec, &end, 10);
    const char *path = end + 1;
    struct sockaddr_un check;
    if (end == spec || *end != ':' || port < 1 || port > 65535 || *path != '/' ||
        strlen(path) >= sizeof check.sun_path)
        die("--proxy", EINVAL);
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0) die("proxy forwarder", errno);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0) die("proxy forwarder", errno);
    if (listen(lfd, 128) != 0) die("proxy forwarder", errno);
    pid_t command = getpid();
    pid_t pid = fork();
    if (pid < 0) die("proxy forwarder", errno);
    if (pid > 0) {
        close(lfd);
        return;
    }
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != command) _exit(0);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC); /* hold none of the command's pipes */
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) _exit(0);
    if (dup2(lfd, 3) < 0) _exit(0);
    lfd = 3;
    syscall(__NR_close_range, 4U, ~0U, 0U);
    signal(SIGPIPE, SIG_IGN);
    int active = 0;
    for (;;) {
        /* The parent-death signal alone is not enough: Landlock's signal scope (ABI 6) stops
         * the confined command's exit from signalling us, outside its domain. So look. */
        if (getppid() != command) _exit(0);
        while (active > 0 && waitpid(-1, NULL, WNOHANG) > 0) active--;
        if (active >= PROXY_MAX_CONNECTIONS) { /* full: wait for one to end, still looking */
            poll(NULL, 0, PROXY_PARENT_CHECK_MS);
            continue;
        }
        struct pollfd ready = {lfd, POLLIN, 0};
        if (poll(&ready, 1, PROXY_PARENT_CHECK_MS) <= 0) continue;
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            _exit(0);
        }
        pid_t me = getpid();
        pid_t child = fork();
        if (child == 0) {
            if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != me) _exit(0);
            close(lfd);
            relay(c, path);
        }
        close(c);
        if (child > 0) active++;
    }
}

/* Bind PATH onto itself read-only; the flags a user namespace may not drop are kept. */
static void protect(const char *path) {
    struct statvfs vfs;
    if (statvfs(path, &vfs) != 0) {
        if (errno == ENOENT) return;
        die(path, errno);
    }
    unsigned long keep = 0;
    if (vfs.f_flag & ST_NOSUID) keep |= MS_NOSUID;
    if (vfs.f_flag & ST_NODEV) keep |= MS_NODEV;
    if (vfs.f_flag & ST_NOEXEC) keep |= MS_NOEXEC;
    if (vfs.f_flag & ST_NOATIME) keep |= MS_NOATIME;
    if (vfs.f_flag & ST_NODIRATIME) keep |= MS_NODIRATIME;
    if (vfs.f_flag & ST_RELATIME) keep |= MS_RELATIME;
    if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) != 0) die(path, errno);
    if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | keep, NULL) != 0)
        die(path, errno);
}

/* Hide PATH from what follows: an empty tmpfs over a directory, /dev/null over a file, both
 * read-only; nothing can be unmounted afterwards (Landlock forbids it). PATH is opened without
 * following a final symlink and mounted on through /proc/self/fd, so what was checked is what
 * is covered; a missing PATH is skipped (the caller hides what exists at spawn time). */
static void hide(const char *path) {
    int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return;
        die(path, errno);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) die(path, errno);
    if (S_ISLNK(st.st_mode)) { /* the caller passes real paths: a symlink here is a race */
        fprintf(stderr, "codebot-exec: %s: a symlink, not hidden\n", path);
        exit(FAIL);
    }
    char at[64];
    snprintf(at, sizeof at, "/proc/self/fd/%d", fd);
    unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY;
    static int empty = -1; /* the first directory's tmpfs, bound over the next ones */
    if (S_ISDIR(st.st_mode) && empty >= 0) {
        char from[64];
        snprintf(from, sizeof from, "/proc/self/fd/%d", empty);
        if (mount(from, at, NULL, MS_BIND, NULL) != 0) die(path, errno); /* stays read-only */
    } else if (S_ISDIR(st.st_mode)) {
        if (mount("codebot-hidden", at, "tmpfs", flags, "size=4k,nr_inodes=1,mode=0555") != 0)
            die(path, errno);
        empty = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC); /* the tmpfs, now on the path */
        if (empty < 0) die(path, errno);
    } else { /* nodev would refuse the read: an empty file reads better to a tool */
        flags &= ~(unsigned long)MS_NODEV;
        if (mount("/dev/null", at, NULL, MS_BIND, NULL) != 0) die(path, errno);
        /* the descriptor still names the file below: remount what now lies on the path */
        if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | flags, NULL) != 0) die(path, errno);
    }
    close(fd);
}

/* Bind PATH onto itself, submounts kept: a mount point, so not renamable (EBUSY). */
static void pin(const char *path) {
    if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return;
        die(path, errno);
    }
}

/* No new AF_UNIX sockets (a socket path such as docker's or the session bus leads out of
 * any file sandbox), no io_uring (it creates sockets past this filter), and only the native
 * system-call ABI (x32 and 32-bit calls would go around it). socketpair() stays allowed. */
static void seccomp_filter(void) {
#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#define X32_BIT 0x40000000
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#define X32_BIT 0
#else
#error "codebot-exec: unsupported architecture for the seccomp filter"
#endif
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if X32_BIT
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {(unsigned short)(sizeof filter / sizeof filter[0]), filter};
    if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0)
        die("seccomp", errno);
}

static void add_rule(int ruleset, const char *path, uint64_t access, uint64_t handled) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return;
        die(path, errno);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) die(path, errno);
    if (!S_ISDIR(st.st_mode)) access &= LL_FS_FILE;
    struct ll_path_beneath_attr rule = {access & handled, fd};
    if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0) != 0)
        die(path, errno);
    close(fd);
}

static void landlock(int abi, char **writable, int count) {
    uint64_t handled = LL_FS_V1 | LL_FS_REFER | LL_FS_TRUNCATE;
    struct ll_ruleset_attr attr = {handled, 0, 0};
    size_t size = 2 * sizeof(uint64_t); /* handled_access_net exists since ABI 4 */
    if (abi < 4) size = sizeof(uint64_t);
    if (abi >= 6) {
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
        size = sizeof attr;
    }
    int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0) die("landlock", errno);
    add_rule(ruleset, "/", LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE, handled);
    for (size_t i = 0; i < sizeof DEVICES / sizeof DEVICES[0]; i++)
        add_rule(ruleset, DEVICES[i], LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE,
                 handled);
    for (int i = 0; i < count; i++) add_rule(ruleset, writable[i], handled, handled);
    if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) die("landlock", errno);
    close(ruleset);
}

static void announce(const char *spec) {
    char *end;
    long fd = strtol(spec, &end, 10);
    if (end == spec || *end != ':' || fd < 0) die("--announce", EINVAL);
    const char *grace = end + 1;
    const char *term = strchr(grace, ':');
    if (term == NULL) die("--announce", EINVAL);
    for (const char *c = grace; *c; c++)
        if (!strchr("0123456789.:", *c)) die("--announce", EINVAL);
    char stat[1024];
    long long ticks = -1;
    int sfd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (sfd >= 0) {
        ssize_t n = read(sfd, stat, sizeof stat - 1);
        close(sfd);
        char *field = n > 0 ? (stat[n] = 0, strrchr(stat, ')')) : NULL;
        for (int i = 0; field != NULL && i < 20; i++) field = strchr(field + 1, ' ');
        if (field != NULL) ticks = atoll(field + 1); /* field 22: starttime */
    }
    char line[256];
    int len = snprintf(line, sizeof line, "{\"pid\": %d, \"ticks\": %lld, \"grace\": %.*s, "
                       "\"term\": %s}\n", (int)getpid(), ticks, (int)(term - grace), grace,
                       term + 1);
    if (ticks >= 0 && len > 0 && (size_t)len < sizeof line) {
        ssize_t ignored = write((int)fd, line, (size_t)len); /* one short write: atomic */
        (void)ignored;
    }
    close((int)fd);
}

/* What this kernel offers; each namespace is tried for real (in a child that then exits). */
static int probe(void) {
    int abi = landlock_abi();
    int seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
    int userns = 0, netns = 0, mountns = 0;
    char why[160] = "";
    pid_t child = fork();
    if (child == 0) {
        int err = enter_namespaces(0);
        if (err) _exit(err & 0x3f); /* an errno: below 64 */
        int result = 200;
        if (unshare(CLONE_NEWNET) == 0 && loopback_up() == 0) result += 2;
        if (unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
            result += 4;
        _exit(result);
    }
    int status = 0;
    if (child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status)) {
        int code = WEXITSTATUS(status);
        if (code >= 200) { /* 200, plus 2 for the network, 4 for the mount namespace */
            userns = 1;
            netns = ((code - 200) & 2) != 0;
            mountns = ((code - 200) & 4) != 0;
        } else if (code < 64) {
            snprintf(why, sizeof why, "%s", strerror(code));
        }
    }
    printf("{\"landlock_abi\": %d, \"landlock_min_abi\": %d, \"seccomp\": %s, "
           "\"userns\": %s, \"userns_error\": \"%s\", \"netns\": %s, \"mountns\": %s, "
           "\"euid\": %u}\n",
           abi, LL_MIN_ABI, seccomp ? "true" : "false", userns ? "true" : "false", why,
           netns ? "true" : "false", mountns ? "true" : "false", (unsigned)geteuid());
    return 0;
}

static void parent_death(pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) die("prctl", errno);
    if (getppid() != parent) _exit(FAIL); /* the parent died before prctl took effect */
}

int main(int argc, char **argv) {
    pid_t parent = 0;
    int sandbox = 0, no_network = 0, nwrite = 0, nprotect = 0, nhide = 0, npin = 0, i = 1;
    char *writable[MAX_PATHS], *protect_paths[MAX_PATHS], *hide_paths[MAX_PATHS];
    char *pin_paths[MAX_PATHS];
    const char *announce_spec = NULL, *proxy_spec = NULL;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--probe") == 0) return probe();
        if (strcmp(arg, "--sandbox") == 0) {
            sandbox = 1;
        } else if (strcmp(arg, "--no-network") == 0) {
            no_network = 1;
        } else if (value == NULL) {
            fprintf(stderr, "codebot-exec: %s needs a value\n", arg);
            return FAIL;
        } else if (strcmp(arg, "--parent") == 0) {
            parent = (pid_t)atoi(value), i++;
        } else if (strcmp(arg, "--proxy") == 0 && proxy_spec == NULL) {
            proxy_spec = value, i++;
        } else if (strcmp(arg, "--announce") == 0) {
            announce_spec = value, i++;
        } else if (strcmp(arg, "--write") == 0 && nwrite < MAX_PATHS) {
            writable[nwrite++] = argv[++i];
        } else if (strcmp(arg, "--protect") == 0 && nprotect < MAX_PATHS) {
            protect_paths[nprotect++] = argv[++i];
        } else if (strcmp(arg, "--hide") == 0 && nhide < MAX_PATHS) {
            hide_paths[nhide++] = argv[++i];
        } else if (strcmp(arg, "--pin") == 0 && npin < MAX_PATHS) {
            pin_paths[npin++] = argv[++i];
        } else {
            fprintf(stderr, "codebot-exec: unknown or repeated option %s\n", arg);
            return FAIL;
        }
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "usage: codebot-exec [options] -- COMMAND [ARG]...\n");
        return FAIL;
    }
    char **command = argv + i + 1;
    if (proxy_spec != NULL && !(sandbox && no_network)) {
        fprintf(stderr, "codebot-exec: --proxy needs --sandbox and --no-network\n");
        return FAIL;
    }
    if (parent > 0) parent_death(parent);
    if (announce_spec != NULL) announce(announce_spec);
    if (sandbox) {
        int abi = landlock_abi();
        if (abi < LL_MIN_ABI) die("landlock", abi ? ENOTSUP : ENOSYS);
        int mounts = nprotect || nhide || npin;
        int flags = (no_network ? CLONE_NEWNET : 0) | (mounts ? CLONE_NEWNS : 0);
        int err = enter_namespaces(flags);
        if (err) die("user namespace", err);
        if (no_network && (err = loopback_up()) != 0) die("loopback", err);
        if (proxy_spec != NULL) forwarder(proxy_spec);
        if (mounts && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
            die("mount namespace", errno);
        for (int p = 0; p < npin; p++) pin(pin_paths[p]);
        for (int p = 0; p < nprotect; p++) protect(protect_paths[p]);
        for (int h = 0; h < nhide; h++) hide(hide_paths[h]);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs", errno);
        seccomp_filter();
        landlock(abi, writable, nwrite);
        if (parent > 0) parent_death(parent); /* a credential change may have reset it */
    }
    execvp(command[0], command);
    int err = errno;
    fprintf(stderr, "codebot-exec: cannot run %s: %s\n", command[0], strerror(err));
    return err == ENOENT ? 127 : 126;
}
