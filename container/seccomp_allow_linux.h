// The calls every shell may make whatever their arguments: those Docker's
// default seccomp profile (moby/profiles) allows a process without
// capabilities, by its unconditional rules and its amd64 and arm64 ones,
// but for the calls seccomp_linux.c rules itself (their arguments decide,
// or cshell refuses them where Docker does not). TestFilterListsMatchTheProgram
// holds this list to that profile. Included inside the filter's
// initializer: an ALLOW_NR line for each call this architecture has.
#ifdef __NR__llseek
ALLOW_NR(__NR__llseek),
#endif
#ifdef __NR__newselect
ALLOW_NR(__NR__newselect),
#endif
#ifdef __NR_accept
ALLOW_NR(__NR_accept),
#endif
#ifdef __NR_accept4
ALLOW_NR(__NR_accept4),
#endif
#ifdef __NR_access
ALLOW_NR(__NR_access),
#endif
#ifdef __NR_adjtimex
ALLOW_NR(__NR_adjtimex),
#endif
#ifdef __NR_alarm
ALLOW_NR(__NR_alarm),
#endif
#ifdef __NR_arch_prctl
ALLOW_NR(__NR_arch_prctl),
#endif
#ifdef __NR_arm_fadvise64_64
ALLOW_NR(__NR_arm_fadvise64_64),
#endif
#ifdef __NR_arm_sync_file_range
ALLOW_NR(__NR_arm_sync_file_range),
#endif
#ifdef __NR_bind
ALLOW_NR(__NR_bind),
#endif
#ifdef __NR_breakpoint
ALLOW_NR(__NR_breakpoint),
#endif
#ifdef __NR_brk
ALLOW_NR(__NR_brk),
#endif
#ifdef __NR_cacheflush
ALLOW_NR(__NR_cacheflush),
#endif
#ifdef __NR_cachestat
ALLOW_NR(__NR_cachestat),
#endif
#ifdef __NR_capget
ALLOW_NR(__NR_capget),
#endif
#ifdef __NR_capset
ALLOW_NR(__NR_capset),
#endif
#ifdef __NR_chdir
ALLOW_NR(__NR_chdir),
#endif
#ifdef __NR_chown
ALLOW_NR(__NR_chown),
#endif
#ifdef __NR_chown32
ALLOW_NR(__NR_chown32),
#endif
#ifdef __NR_clock_getres
ALLOW_NR(__NR_clock_getres),
#endif
#ifdef __NR_clock_getres_time64
ALLOW_NR(__NR_clock_getres_time64),
#endif
#ifdef __NR_clock_gettime
ALLOW_NR(__NR_clock_gettime),
#endif
#ifdef __NR_clock_gettime64
ALLOW_NR(__NR_clock_gettime64),
#endif
#ifdef __NR_clock_nanosleep
ALLOW_NR(__NR_clock_nanosleep),
#endif
#ifdef __NR_clock_nanosleep_time64
ALLOW_NR(__NR_clock_nanosleep_time64),
#endif
#ifdef __NR_close
ALLOW_NR(__NR_close),
#endif
#ifdef __NR_close_range
ALLOW_NR(__NR_close_range),
#endif
#ifdef __NR_copy_file_range
ALLOW_NR(__NR_copy_file_range),
#endif
#ifdef __NR_dup
ALLOW_NR(__NR_dup),
#endif
#ifdef __NR_dup2
ALLOW_NR(__NR_dup2),
#endif
#ifdef __NR_dup3
ALLOW_NR(__NR_dup3),
#endif
#ifdef __NR_epoll_create
ALLOW_NR(__NR_epoll_create),
#endif
#ifdef __NR_epoll_create1
ALLOW_NR(__NR_epoll_create1),
#endif
#ifdef __NR_epoll_ctl
ALLOW_NR(__NR_epoll_ctl),
#endif
#ifdef __NR_epoll_ctl_old
ALLOW_NR(__NR_epoll_ctl_old),
#endif
#ifdef __NR_epoll_pwait
ALLOW_NR(__NR_epoll_pwait),
#endif
#ifdef __NR_epoll_pwait2
ALLOW_NR(__NR_epoll_pwait2),
#endif
#ifdef __NR_epoll_wait
ALLOW_NR(__NR_epoll_wait),
#endif
#ifdef __NR_epoll_wait_old
ALLOW_NR(__NR_epoll_wait_old),
#endif
#ifdef __NR_eventfd
ALLOW_NR(__NR_eventfd),
#endif
#ifdef __NR_eventfd2
ALLOW_NR(__NR_eventfd2),
#endif
#ifdef __NR_execve
ALLOW_NR(__NR_execve),
#endif
#ifdef __NR_execveat
ALLOW_NR(__NR_execveat),
#endif
#ifdef __NR_exit
ALLOW_NR(__NR_exit),
#endif
#ifdef __NR_exit_group
ALLOW_NR(__NR_exit_group),
#endif
#ifdef __NR_faccessat
ALLOW_NR(__NR_faccessat),
#endif
#ifdef __NR_faccessat2
ALLOW_NR(__NR_faccessat2),
#endif
#ifdef __NR_fadvise64
ALLOW_NR(__NR_fadvise64),
#endif
#ifdef __NR_fadvise64_64
ALLOW_NR(__NR_fadvise64_64),
#endif
#ifdef __NR_fallocate
ALLOW_NR(__NR_fallocate),
#endif
#ifdef __NR_fanotify_mark
ALLOW_NR(__NR_fanotify_mark),
#endif
#ifdef __NR_fchdir
ALLOW_NR(__NR_fchdir),
#endif
#ifdef __NR_fchown
ALLOW_NR(__NR_fchown),
#endif
#ifdef __NR_fchown32
ALLOW_NR(__NR_fchown32),
#endif
#ifdef __NR_fchownat
ALLOW_NR(__NR_fchownat),
#endif
#ifdef __NR_fcntl
ALLOW_NR(__NR_fcntl),
#endif
#ifdef __NR_fcntl64
ALLOW_NR(__NR_fcntl64),
#endif
#ifdef __NR_fdatasync
ALLOW_NR(__NR_fdatasync),
#endif
#ifdef __NR_fgetxattr
ALLOW_NR(__NR_fgetxattr),
#endif
#ifdef __NR_flistxattr
ALLOW_NR(__NR_flistxattr),
#endif
#ifdef __NR_flock
ALLOW_NR(__NR_flock),
#endif
#ifdef __NR_fork
ALLOW_NR(__NR_fork),
#endif
#ifdef __NR_fremovexattr
ALLOW_NR(__NR_fremovexattr),
#endif
#ifdef __NR_fstat
ALLOW_NR(__NR_fstat),
#endif
#ifdef __NR_fstat64
ALLOW_NR(__NR_fstat64),
#endif
#ifdef __NR_fstatat64
ALLOW_NR(__NR_fstatat64),
#endif
#ifdef __NR_fstatfs
ALLOW_NR(__NR_fstatfs),
#endif
#ifdef __NR_fstatfs64
ALLOW_NR(__NR_fstatfs64),
#endif
#ifdef __NR_fsync
ALLOW_NR(__NR_fsync),
#endif
#ifdef __NR_ftruncate
ALLOW_NR(__NR_ftruncate),
#endif
#ifdef __NR_ftruncate64
ALLOW_NR(__NR_ftruncate64),
#endif
#ifdef __NR_futex
ALLOW_NR(__NR_futex),
#endif
#ifdef __NR_futex_requeue
ALLOW_NR(__NR_futex_requeue),
#endif
#ifdef __NR_futex_time64
ALLOW_NR(__NR_futex_time64),
#endif
#ifdef __NR_futex_wait
ALLOW_NR(__NR_futex_wait),
#endif
#ifdef __NR_futex_waitv
ALLOW_NR(__NR_futex_waitv),
#endif
#ifdef __NR_futex_wake
ALLOW_NR(__NR_futex_wake),
#endif
#ifdef __NR_futimesat
ALLOW_NR(__NR_futimesat),
#endif
#ifdef __NR_get_robust_list
ALLOW_NR(__NR_get_robust_list),
#endif
#ifdef __NR_get_thread_area
ALLOW_NR(__NR_get_thread_area),
#endif
#ifdef __NR_getcpu
ALLOW_NR(__NR_getcpu),
#endif
#ifdef __NR_getcwd
ALLOW_NR(__NR_getcwd),
#endif
#ifdef __NR_getdents
ALLOW_NR(__NR_getdents),
#endif
#ifdef __NR_getdents64
ALLOW_NR(__NR_getdents64),
#endif
#ifdef __NR_getegid
ALLOW_NR(__NR_getegid),
#endif
#ifdef __NR_getegid32
ALLOW_NR(__NR_getegid32),
#endif
#ifdef __NR_geteuid
ALLOW_NR(__NR_geteuid),
#endif
#ifdef __NR_geteuid32
ALLOW_NR(__NR_geteuid32),
#endif
#ifdef __NR_getgid
ALLOW_NR(__NR_getgid),
#endif
#ifdef __NR_getgid32
ALLOW_NR(__NR_getgid32),
#endif
#ifdef __NR_getgroups
ALLOW_NR(__NR_getgroups),
#endif
#ifdef __NR_getgroups32
ALLOW_NR(__NR_getgroups32),
#endif
#ifdef __NR_getitimer
ALLOW_NR(__NR_getitimer),
#endif
#ifdef __NR_getpeername
ALLOW_NR(__NR_getpeername),
#endif
#ifdef __NR_getpgid
ALLOW_NR(__NR_getpgid),
#endif
#ifdef __NR_getpgrp
ALLOW_NR(__NR_getpgrp),
#endif
#ifdef __NR_getpid
ALLOW_NR(__NR_getpid),
#endif
#ifdef __NR_getppid
ALLOW_NR(__NR_getppid),
#endif
#ifdef __NR_getpriority
ALLOW_NR(__NR_getpriority),
#endif
#ifdef __NR_getrandom
ALLOW_NR(__NR_getrandom),
#endif
#ifdef __NR_getresgid
ALLOW_NR(__NR_getresgid),
#endif
#ifdef __NR_getresgid32
ALLOW_NR(__NR_getresgid32),
#endif
#ifdef __NR_getresuid
ALLOW_NR(__NR_getresuid),
#endif
#ifdef __NR_getresuid32
ALLOW_NR(__NR_getresuid32),
#endif
#ifdef __NR_getrlimit
ALLOW_NR(__NR_getrlimit),
#endif
#ifdef __NR_getrusage
ALLOW_NR(__NR_getrusage),
#endif
#ifdef __NR_getsid
ALLOW_NR(__NR_getsid),
#endif
#ifdef __NR_getsockname
ALLOW_NR(__NR_getsockname),
#endif
#ifdef __NR_getsockopt
ALLOW_NR(__NR_getsockopt),
#endif
#ifdef __NR_gettid
ALLOW_NR(__NR_gettid),
#endif
#ifdef __NR_gettimeofday
ALLOW_NR(__NR_gettimeofday),
#endif
#ifdef __NR_getuid
ALLOW_NR(__NR_getuid),
#endif
#ifdef __NR_getuid32
ALLOW_NR(__NR_getuid32),
#endif
#ifdef __NR_getxattr
ALLOW_NR(__NR_getxattr),
#endif
#ifdef __NR_getxattrat
ALLOW_NR(__NR_getxattrat),
#endif
#ifdef __NR_inotify_add_watch
ALLOW_NR(__NR_inotify_add_watch),
#endif
#ifdef __NR_inotify_init
ALLOW_NR(__NR_inotify_init),
#endif
#ifdef __NR_inotify_init1
ALLOW_NR(__NR_inotify_init1),
#endif
#ifdef __NR_inotify_rm_watch
ALLOW_NR(__NR_inotify_rm_watch),
#endif
#ifdef __NR_io_cancel
ALLOW_NR(__NR_io_cancel),
#endif
#ifdef __NR_io_destroy
ALLOW_NR(__NR_io_destroy),
#endif
#ifdef __NR_io_getevents
ALLOW_NR(__NR_io_getevents),
#endif
#ifdef __NR_io_pgetevents
ALLOW_NR(__NR_io_pgetevents),
#endif
#ifdef __NR_io_pgetevents_time64
ALLOW_NR(__NR_io_pgetevents_time64),
#endif
#ifdef __NR_io_setup
ALLOW_NR(__NR_io_setup),
#endif
#ifdef __NR_io_submit
ALLOW_NR(__NR_io_submit),
#endif
#ifdef __NR_ioctl
ALLOW_NR(__NR_ioctl),
#endif
#ifdef __NR_ioprio_get
ALLOW_NR(__NR_ioprio_get),
#endif
#ifdef __NR_ioprio_set
ALLOW_NR(__NR_ioprio_set),
#endif
#ifdef __NR_ipc
ALLOW_NR(__NR_ipc),
#endif
#ifdef __NR_kill
ALLOW_NR(__NR_kill),
#endif
#ifdef __NR_landlock_add_rule
ALLOW_NR(__NR_landlock_add_rule),
#endif
#ifdef __NR_landlock_create_ruleset
ALLOW_NR(__NR_landlock_create_ruleset),
#endif
#ifdef __NR_landlock_restrict_self
ALLOW_NR(__NR_landlock_restrict_self),
#endif
#ifdef __NR_lchown
ALLOW_NR(__NR_lchown),
#endif
#ifdef __NR_lchown32
ALLOW_NR(__NR_lchown32),
#endif
#ifdef __NR_lgetxattr
ALLOW_NR(__NR_lgetxattr),
#endif
#ifdef __NR_link
ALLOW_NR(__NR_link),
#endif
#ifdef __NR_linkat
ALLOW_NR(__NR_linkat),
#endif
#ifdef __NR_listen
ALLOW_NR(__NR_listen),
#endif
#ifdef __NR_listmount
ALLOW_NR(__NR_listmount),
#endif
#ifdef __NR_listxattr
ALLOW_NR(__NR_listxattr),
#endif
#ifdef __NR_listxattrat
ALLOW_NR(__NR_listxattrat),
#endif
#ifdef __NR_llistxattr
ALLOW_NR(__NR_llistxattr),
#endif
#ifdef __NR_lremovexattr
ALLOW_NR(__NR_lremovexattr),
#endif
#ifdef __NR_lseek
ALLOW_NR(__NR_lseek),
#endif
#ifdef __NR_lstat
ALLOW_NR(__NR_lstat),
#endif
#ifdef __NR_lstat64
ALLOW_NR(__NR_lstat64),
#endif
#ifdef __NR_madvise
ALLOW_NR(__NR_madvise),
#endif
#ifdef __NR_map_shadow_stack
ALLOW_NR(__NR_map_shadow_stack),
#endif
#ifdef __NR_membarrier
ALLOW_NR(__NR_membarrier),
#endif
#ifdef __NR_memfd_create
ALLOW_NR(__NR_memfd_create),
#endif
#ifdef __NR_memfd_secret
ALLOW_NR(__NR_memfd_secret),
#endif
#ifdef __NR_mincore
ALLOW_NR(__NR_mincore),
#endif
#ifdef __NR_mkdir
ALLOW_NR(__NR_mkdir),
#endif
#ifdef __NR_mkdirat
ALLOW_NR(__NR_mkdirat),
#endif
#ifdef __NR_mlock
ALLOW_NR(__NR_mlock),
#endif
#ifdef __NR_mlock2
ALLOW_NR(__NR_mlock2),
#endif
#ifdef __NR_mlockall
ALLOW_NR(__NR_mlockall),
#endif
#ifdef __NR_mmap
ALLOW_NR(__NR_mmap),
#endif
#ifdef __NR_mmap2
ALLOW_NR(__NR_mmap2),
#endif
#ifdef __NR_modify_ldt
ALLOW_NR(__NR_modify_ldt),
#endif
#ifdef __NR_mprotect
ALLOW_NR(__NR_mprotect),
#endif
#ifdef __NR_mq_getsetattr
ALLOW_NR(__NR_mq_getsetattr),
#endif
#ifdef __NR_mq_notify
ALLOW_NR(__NR_mq_notify),
#endif
#ifdef __NR_mq_open
ALLOW_NR(__NR_mq_open),
#endif
#ifdef __NR_mq_timedreceive
ALLOW_NR(__NR_mq_timedreceive),
#endif
#ifdef __NR_mq_timedreceive_time64
ALLOW_NR(__NR_mq_timedreceive_time64),
#endif
#ifdef __NR_mq_timedsend
ALLOW_NR(__NR_mq_timedsend),
#endif
#ifdef __NR_mq_timedsend_time64
ALLOW_NR(__NR_mq_timedsend_time64),
#endif
#ifdef __NR_mq_unlink
ALLOW_NR(__NR_mq_unlink),
#endif
#ifdef __NR_mremap
ALLOW_NR(__NR_mremap),
#endif
#ifdef __NR_mseal
ALLOW_NR(__NR_mseal),
#endif
#ifdef __NR_msgctl
ALLOW_NR(__NR_msgctl),
#endif
#ifdef __NR_msgget
ALLOW_NR(__NR_msgget),
#endif
#ifdef __NR_msgrcv
ALLOW_NR(__NR_msgrcv),
#endif
#ifdef __NR_msgsnd
ALLOW_NR(__NR_msgsnd),
#endif
#ifdef __NR_msync
ALLOW_NR(__NR_msync),
#endif
#ifdef __NR_munlock
ALLOW_NR(__NR_munlock),
#endif
#ifdef __NR_munlockall
ALLOW_NR(__NR_munlockall),
#endif
#ifdef __NR_munmap
ALLOW_NR(__NR_munmap),
#endif
#ifdef __NR_nanosleep
ALLOW_NR(__NR_nanosleep),
#endif
#ifdef __NR_newfstatat
ALLOW_NR(__NR_newfstatat),
#endif
#ifdef __NR_pause
ALLOW_NR(__NR_pause),
#endif
#ifdef __NR_pidfd_open
ALLOW_NR(__NR_pidfd_open),
#endif
#ifdef __NR_pidfd_send_signal
ALLOW_NR(__NR_pidfd_send_signal),
#endif
#ifdef __NR_pipe
ALLOW_NR(__NR_pipe),
#endif
#ifdef __NR_pipe2
ALLOW_NR(__NR_pipe2),
#endif
#ifdef __NR_pkey_alloc
ALLOW_NR(__NR_pkey_alloc),
#endif
#ifdef __NR_pkey_free
ALLOW_NR(__NR_pkey_free),
#endif
#ifdef __NR_pkey_mprotect
ALLOW_NR(__NR_pkey_mprotect),
#endif
#ifdef __NR_poll
ALLOW_NR(__NR_poll),
#endif
#ifdef __NR_ppoll
ALLOW_NR(__NR_ppoll),
#endif
#ifdef __NR_ppoll_time64
ALLOW_NR(__NR_ppoll_time64),
#endif
#ifdef __NR_prctl
ALLOW_NR(__NR_prctl),
#endif
#ifdef __NR_pread64
ALLOW_NR(__NR_pread64),
#endif
#ifdef __NR_preadv
ALLOW_NR(__NR_preadv),
#endif
#ifdef __NR_preadv2
ALLOW_NR(__NR_preadv2),
#endif
#ifdef __NR_prlimit64
ALLOW_NR(__NR_prlimit64),
#endif
#ifdef __NR_process_mrelease
ALLOW_NR(__NR_process_mrelease),
#endif
#ifdef __NR_process_vm_readv
ALLOW_NR(__NR_process_vm_readv),
#endif
#ifdef __NR_process_vm_writev
ALLOW_NR(__NR_process_vm_writev),
#endif
#ifdef __NR_pselect6
ALLOW_NR(__NR_pselect6),
#endif
#ifdef __NR_pselect6_time64
ALLOW_NR(__NR_pselect6_time64),
#endif
#ifdef __NR_ptrace
ALLOW_NR(__NR_ptrace),
#endif
#ifdef __NR_pwrite64
ALLOW_NR(__NR_pwrite64),
#endif
#ifdef __NR_pwritev
ALLOW_NR(__NR_pwritev),
#endif
#ifdef __NR_pwritev2
ALLOW_NR(__NR_pwritev2),
#endif
#ifdef __NR_read
ALLOW_NR(__NR_read),
#endif
#ifdef __NR_readahead
ALLOW_NR(__NR_readahead),
#endif
#ifdef __NR_readlink
ALLOW_NR(__NR_readlink),
#endif
#ifdef __NR_readlinkat
ALLOW_NR(__NR_readlinkat),
#endif
#ifdef __NR_readv
ALLOW_NR(__NR_readv),
#endif
#ifdef __NR_recv
ALLOW_NR(__NR_recv),
#endif
#ifdef __NR_recvfrom
ALLOW_NR(__NR_recvfrom),
#endif
#ifdef __NR_recvmmsg
ALLOW_NR(__NR_recvmmsg),
#endif
#ifdef __NR_recvmmsg_time64
ALLOW_NR(__NR_recvmmsg_time64),
#endif
#ifdef __NR_recvmsg
ALLOW_NR(__NR_recvmsg),
#endif
#ifdef __NR_remap_file_pages
ALLOW_NR(__NR_remap_file_pages),
#endif
#ifdef __NR_removexattr
ALLOW_NR(__NR_removexattr),
#endif
#ifdef __NR_removexattrat
ALLOW_NR(__NR_removexattrat),
#endif
#ifdef __NR_rename
ALLOW_NR(__NR_rename),
#endif
#ifdef __NR_renameat
ALLOW_NR(__NR_renameat),
#endif
#ifdef __NR_renameat2
ALLOW_NR(__NR_renameat2),
#endif
#ifdef __NR_restart_syscall
ALLOW_NR(__NR_restart_syscall),
#endif
#ifdef __NR_riscv_hwprobe
ALLOW_NR(__NR_riscv_hwprobe),
#endif
#ifdef __NR_rmdir
ALLOW_NR(__NR_rmdir),
#endif
#ifdef __NR_rseq
ALLOW_NR(__NR_rseq),
#endif
#ifdef __NR_rt_sigaction
ALLOW_NR(__NR_rt_sigaction),
#endif
#ifdef __NR_rt_sigpending
ALLOW_NR(__NR_rt_sigpending),
#endif
#ifdef __NR_rt_sigprocmask
ALLOW_NR(__NR_rt_sigprocmask),
#endif
#ifdef __NR_rt_sigqueueinfo
ALLOW_NR(__NR_rt_sigqueueinfo),
#endif
#ifdef __NR_rt_sigreturn
ALLOW_NR(__NR_rt_sigreturn),
#endif
#ifdef __NR_rt_sigsuspend
ALLOW_NR(__NR_rt_sigsuspend),
#endif
#ifdef __NR_rt_sigtimedwait
ALLOW_NR(__NR_rt_sigtimedwait),
#endif
#ifdef __NR_rt_sigtimedwait_time64
ALLOW_NR(__NR_rt_sigtimedwait_time64),
#endif
#ifdef __NR_rt_tgsigqueueinfo
ALLOW_NR(__NR_rt_tgsigqueueinfo),
#endif
#ifdef __NR_sched_get_priority_max
ALLOW_NR(__NR_sched_get_priority_max),
#endif
#ifdef __NR_sched_get_priority_min
ALLOW_NR(__NR_sched_get_priority_min),
#endif
#ifdef __NR_sched_getaffinity
ALLOW_NR(__NR_sched_getaffinity),
#endif
#ifdef __NR_sched_getattr
ALLOW_NR(__NR_sched_getattr),
#endif
#ifdef __NR_sched_getparam
ALLOW_NR(__NR_sched_getparam),
#endif
#ifdef __NR_sched_getscheduler
ALLOW_NR(__NR_sched_getscheduler),
#endif
#ifdef __NR_sched_rr_get_interval
ALLOW_NR(__NR_sched_rr_get_interval),
#endif
#ifdef __NR_sched_rr_get_interval_time64
ALLOW_NR(__NR_sched_rr_get_interval_time64),
#endif
#ifdef __NR_sched_setaffinity
ALLOW_NR(__NR_sched_setaffinity),
#endif
#ifdef __NR_sched_setattr
ALLOW_NR(__NR_sched_setattr),
#endif
#ifdef __NR_sched_setparam
ALLOW_NR(__NR_sched_setparam),
#endif
#ifdef __NR_sched_setscheduler
ALLOW_NR(__NR_sched_setscheduler),
#endif
#ifdef __NR_sched_yield
ALLOW_NR(__NR_sched_yield),
#endif
#ifdef __NR_seccomp
ALLOW_NR(__NR_seccomp),
#endif
#ifdef __NR_select
ALLOW_NR(__NR_select),
#endif
#ifdef __NR_semctl
ALLOW_NR(__NR_semctl),
#endif
#ifdef __NR_semget
ALLOW_NR(__NR_semget),
#endif
#ifdef __NR_semop
ALLOW_NR(__NR_semop),
#endif
#ifdef __NR_semtimedop
ALLOW_NR(__NR_semtimedop),
#endif
#ifdef __NR_semtimedop_time64
ALLOW_NR(__NR_semtimedop_time64),
#endif
#ifdef __NR_send
ALLOW_NR(__NR_send),
#endif
#ifdef __NR_sendfile
ALLOW_NR(__NR_sendfile),
#endif
#ifdef __NR_sendfile64
ALLOW_NR(__NR_sendfile64),
#endif
#ifdef __NR_sendmmsg
ALLOW_NR(__NR_sendmmsg),
#endif
#ifdef __NR_set_robust_list
ALLOW_NR(__NR_set_robust_list),
#endif
#ifdef __NR_set_thread_area
ALLOW_NR(__NR_set_thread_area),
#endif
#ifdef __NR_set_tid_address
ALLOW_NR(__NR_set_tid_address),
#endif
#ifdef __NR_set_tls
ALLOW_NR(__NR_set_tls),
#endif
#ifdef __NR_setfsgid
ALLOW_NR(__NR_setfsgid),
#endif
#ifdef __NR_setfsgid32
ALLOW_NR(__NR_setfsgid32),
#endif
#ifdef __NR_setfsuid
ALLOW_NR(__NR_setfsuid),
#endif
#ifdef __NR_setfsuid32
ALLOW_NR(__NR_setfsuid32),
#endif
#ifdef __NR_setgid
ALLOW_NR(__NR_setgid),
#endif
#ifdef __NR_setgid32
ALLOW_NR(__NR_setgid32),
#endif
#ifdef __NR_setgroups
ALLOW_NR(__NR_setgroups),
#endif
#ifdef __NR_setgroups32
ALLOW_NR(__NR_setgroups32),
#endif
#ifdef __NR_setitimer
ALLOW_NR(__NR_setitimer),
#endif
#ifdef __NR_setpgid
ALLOW_NR(__NR_setpgid),
#endif
#ifdef __NR_setpriority
ALLOW_NR(__NR_setpriority),
#endif
#ifdef __NR_setregid
ALLOW_NR(__NR_setregid),
#endif
#ifdef __NR_setregid32
ALLOW_NR(__NR_setregid32),
#endif
#ifdef __NR_setresgid
ALLOW_NR(__NR_setresgid),
#endif
#ifdef __NR_setresgid32
ALLOW_NR(__NR_setresgid32),
#endif
#ifdef __NR_setresuid
ALLOW_NR(__NR_setresuid),
#endif
#ifdef __NR_setresuid32
ALLOW_NR(__NR_setresuid32),
#endif
#ifdef __NR_setreuid
ALLOW_NR(__NR_setreuid),
#endif
#ifdef __NR_setreuid32
ALLOW_NR(__NR_setreuid32),
#endif
#ifdef __NR_setrlimit
ALLOW_NR(__NR_setrlimit),
#endif
#ifdef __NR_setsid
ALLOW_NR(__NR_setsid),
#endif
#ifdef __NR_setsockopt
ALLOW_NR(__NR_setsockopt),
#endif
#ifdef __NR_setuid
ALLOW_NR(__NR_setuid),
#endif
#ifdef __NR_setuid32
ALLOW_NR(__NR_setuid32),
#endif
#ifdef __NR_shmat
ALLOW_NR(__NR_shmat),
#endif
#ifdef __NR_shmctl
ALLOW_NR(__NR_shmctl),
#endif
#ifdef __NR_shmdt
ALLOW_NR(__NR_shmdt),
#endif
#ifdef __NR_shmget
ALLOW_NR(__NR_shmget),
#endif
#ifdef __NR_shutdown
ALLOW_NR(__NR_shutdown),
#endif
#ifdef __NR_sigaltstack
ALLOW_NR(__NR_sigaltstack),
#endif
#ifdef __NR_signalfd
ALLOW_NR(__NR_signalfd),
#endif
#ifdef __NR_signalfd4
ALLOW_NR(__NR_signalfd4),
#endif
#ifdef __NR_sigprocmask
ALLOW_NR(__NR_sigprocmask),
#endif
#ifdef __NR_sigreturn
ALLOW_NR(__NR_sigreturn),
#endif
#ifdef __NR_socketcall
ALLOW_NR(__NR_socketcall),
#endif
#ifdef __NR_socketpair
ALLOW_NR(__NR_socketpair),
#endif
#ifdef __NR_splice
ALLOW_NR(__NR_splice),
#endif
#ifdef __NR_stat
ALLOW_NR(__NR_stat),
#endif
#ifdef __NR_stat64
ALLOW_NR(__NR_stat64),
#endif
#ifdef __NR_statfs
ALLOW_NR(__NR_statfs),
#endif
#ifdef __NR_statfs64
ALLOW_NR(__NR_statfs64),
#endif
#ifdef __NR_statmount
ALLOW_NR(__NR_statmount),
#endif
#ifdef __NR_statx
ALLOW_NR(__NR_statx),
#endif
#ifdef __NR_symlink
ALLOW_NR(__NR_symlink),
#endif
#ifdef __NR_symlinkat
ALLOW_NR(__NR_symlinkat),
#endif
#ifdef __NR_sync
ALLOW_NR(__NR_sync),
#endif
#ifdef __NR_sync_file_range
ALLOW_NR(__NR_sync_file_range),
#endif
#ifdef __NR_sync_file_range2
ALLOW_NR(__NR_sync_file_range2),
#endif
#ifdef __NR_syncfs
ALLOW_NR(__NR_syncfs),
#endif
#ifdef __NR_sysinfo
ALLOW_NR(__NR_sysinfo),
#endif
#ifdef __NR_tee
ALLOW_NR(__NR_tee),
#endif
#ifdef __NR_tgkill
ALLOW_NR(__NR_tgkill),
#endif
#ifdef __NR_time
ALLOW_NR(__NR_time),
#endif
#ifdef __NR_timer_create
ALLOW_NR(__NR_timer_create),
#endif
#ifdef __NR_timer_delete
ALLOW_NR(__NR_timer_delete),
#endif
#ifdef __NR_timer_getoverrun
ALLOW_NR(__NR_timer_getoverrun),
#endif
#ifdef __NR_timer_gettime
ALLOW_NR(__NR_timer_gettime),
#endif
#ifdef __NR_timer_gettime64
ALLOW_NR(__NR_timer_gettime64),
#endif
#ifdef __NR_timer_settime
ALLOW_NR(__NR_timer_settime),
#endif
#ifdef __NR_timer_settime64
ALLOW_NR(__NR_timer_settime64),
#endif
#ifdef __NR_timerfd_create
ALLOW_NR(__NR_timerfd_create),
#endif
#ifdef __NR_timerfd_gettime
ALLOW_NR(__NR_timerfd_gettime),
#endif
#ifdef __NR_timerfd_gettime64
ALLOW_NR(__NR_timerfd_gettime64),
#endif
#ifdef __NR_timerfd_settime
ALLOW_NR(__NR_timerfd_settime),
#endif
#ifdef __NR_timerfd_settime64
ALLOW_NR(__NR_timerfd_settime64),
#endif
#ifdef __NR_times
ALLOW_NR(__NR_times),
#endif
#ifdef __NR_tkill
ALLOW_NR(__NR_tkill),
#endif
#ifdef __NR_truncate
ALLOW_NR(__NR_truncate),
#endif
#ifdef __NR_truncate64
ALLOW_NR(__NR_truncate64),
#endif
#ifdef __NR_ugetrlimit
ALLOW_NR(__NR_ugetrlimit),
#endif
#ifdef __NR_umask
ALLOW_NR(__NR_umask),
#endif
#ifdef __NR_uname
ALLOW_NR(__NR_uname),
#endif
#ifdef __NR_unlink
ALLOW_NR(__NR_unlink),
#endif
#ifdef __NR_unlinkat
ALLOW_NR(__NR_unlinkat),
#endif
#ifdef __NR_uretprobe
ALLOW_NR(__NR_uretprobe),
#endif
#ifdef __NR_utime
ALLOW_NR(__NR_utime),
#endif
#ifdef __NR_utimensat
ALLOW_NR(__NR_utimensat),
#endif
#ifdef __NR_utimensat_time64
ALLOW_NR(__NR_utimensat_time64),
#endif
#ifdef __NR_utimes
ALLOW_NR(__NR_utimes),
#endif
#ifdef __NR_vfork
ALLOW_NR(__NR_vfork),
#endif
#ifdef __NR_vmsplice
ALLOW_NR(__NR_vmsplice),
#endif
#ifdef __NR_wait4
ALLOW_NR(__NR_wait4),
#endif
#ifdef __NR_waitid
ALLOW_NR(__NR_waitid),
#endif
#ifdef __NR_waitpid
ALLOW_NR(__NR_waitpid),
#endif
#ifdef __NR_write
ALLOW_NR(__NR_write),
#endif
#ifdef __NR_writev
ALLOW_NR(__NR_writev),
#endif
