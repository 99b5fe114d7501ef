"""test/lib/orphans.py: the server processes a test's SIGKILL leaves behind.
crash_safety.py and failover.py kill a postmaster; its children are
reparented to the test (a subreaper), which finds and reaps them, so none
lingers as a zombie whatever the container's init does."""
import ctypes
import os


def become_subreaper():
    """Orphaned processes are reparented to this one (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def reap_children():
    """Reaps every child that has exited, without waiting."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def children_of(pid):
    """The pids whose parent is pid."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(") ", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found
