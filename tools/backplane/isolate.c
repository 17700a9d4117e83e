/* Running a step in a child process first, so that a plugin that crashes
 * (in open, say) is reported instead of ending the command. The library
 * cannot protect the process that calls it; the command line can. */
#include "cli.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

int cli_isolated_signal(void (*fn)(void *arg), void *arg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return 0; /* cannot isolate: the caller runs the step in-process */
    if (pid == 0) {
        /* The parent repeats the step if this one survives: keep its output
         * (warnings, logs) from appearing twice. */
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        fn(arg);
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

const char *cli_signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return "a signal";
    }
}
