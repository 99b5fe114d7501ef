"""test/lib/container_root.py: a container of an image run as `podman run`
would run it, where podman run cannot (this sandbox lacks CAP_SYS_RESOURCE:
"crun: setrlimit RLIMIT_NPROC: Operation not permitted"): podman create and
podman mount give the image's root; /proc, /dev, /sys and, as podman run
provides them, /etc/hosts and /etc/resolv.conf are bind-mounted into it; the
image's ENTRYPOINT and CMD run there through chroot, as the image's USER,
with only the image's ENV plus the -e variables given. The container shares
the host's network, so a port the image would publish is one the test
chooses (through the program's listen variable).

    c = ContainerRoot("localhost/pgmq-relay:test", "name")
    c.bind("/host/dir", "/etc/pgmq-relay")       # -v /host/dir:/etc/pgmq-relay:ro
    c.start({"VAR": "value"}, log_path)          # podman run -d -e VAR=value IMAGE
    c.health()                                   # the HEALTHCHECK command: (status, output)
    c.stop()                                     # the STOPSIGNAL; returns the exit status
    c.close()                                    # unmount, podman rm
"""
import json
import os
import signal
import subprocess


def podman(*args, check=True):
    r = subprocess.run(["podman", *args], capture_output=True, text=True)
    if check and r.returncode:
        raise RuntimeError(f"podman {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout.strip()


def inspect(image):
    """The image's configuration: User, Env, Entrypoint, Cmd, Healthcheck, size."""
    data = json.loads(podman("image", "inspect", image))[0]
    config = data.get("Config") or {}
    config["Healthcheck"] = data.get("Healthcheck") or config.get("Healthcheck") or {}
    config["Size"] = data.get("Size", 0)
    return config


class ContainerRoot:
    def __init__(self, image, name):
        self.config = inspect(image)
        self.name = name
        self.mounts = []
        self.proc = None
        self.env = {}
        podman("rm", "-f", name, check=False)
        podman("create", "--name", name, image)
        self.root = podman("mount", name)
        for path in ("/proc", "/dev", "/sys"):
            self._mount(path, path)
        for path in ("/etc/hosts", "/etc/resolv.conf"):
            self._mount(path, path, read_only=True)
        user = (self.config.get("User") or "root").split(":")[0]
        with open(os.path.join(self.root, "etc/passwd")) as f:
            entry = next(line.split(":") for line in f if line.split(":")[0] == user or line.split(":")[2] == user)
        self.user, self.uid, self.gid, self.home = entry[0], int(entry[2]), int(entry[3]), entry[5]

    def _mount(self, source, target, read_only=False):
        path = self.root + target
        if os.path.isdir(source):
            os.makedirs(path, exist_ok=True)
        elif not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "a").close()
        subprocess.run(["mount", "--bind", source, path], check=True)
        self.mounts.append(path)
        if read_only:
            subprocess.run(["mount", "-o", "remount,bind,ro", path], check=True)

    def bind(self, source, target):
        """-v SOURCE:TARGET:ro"""
        self._mount(source, target, read_only=True)

    def _argv(self, env, argv):
        image_env = [e for e in self.config.get("Env") or []]
        extra = [f"{k}={v}" for k, v in env.items()]
        return ["chroot", f"--userspec={self.uid}:{self.gid}", f"--groups={self.gid}", self.root, "/usr/bin/env", "-i",
                *image_env, f"HOME={self.home}", *extra, *argv]

    def start(self, env, log_path, args=None):
        """The ENTRYPOINT with args (default: the image's CMD)."""
        argv = (self.config.get("Entrypoint") or []) + (args if args is not None else (self.config.get("Cmd") or []))
        self.env = dict(env)  # a health check or an exec sees the container's -e variables too
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(self._argv(env, argv), stdout=self.log, stderr=subprocess.STDOUT, cwd="/")
        return self.proc

    def exec(self, argv, env=None, timeout=30):
        """Like podman exec: (exit status, output)."""
        r = subprocess.run(self._argv(dict(self.env, **(env or {})), argv), capture_output=True, text=True,
                           timeout=timeout, cwd="/")
        return r.returncode, (r.stdout + r.stderr).strip()

    def health(self):
        test = self.config["Healthcheck"].get("Test") or []
        if test[:1] == ["CMD"]:
            return self.exec(test[1:])
        if test[:1] == ["CMD-SHELL"]:
            return self.exec(["/bin/sh", "-c", test[1]])
        return None, f"no HEALTHCHECK ({test})"

    def stop(self, timeout=30):
        sig = getattr(signal, self.config.get("StopSignal") or "SIGTERM")
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return f"no exit within {timeout} s, killed ({self.proc.wait()})"
        finally:
            self.log.close()

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for path in reversed(self.mounts):
            if subprocess.run(["umount", path], capture_output=True).returncode:
                subprocess.run(["umount", "-l", path], capture_output=True)
        self.mounts = []
        podman("umount", self.name, check=False)
        podman("rm", "-f", self.name, check=False)
