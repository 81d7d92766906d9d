"""Running the tools: a subprocess with a time limit, its output kept, never an exception."""

import signal
import subprocess
import threading


class Done:
    def __init__(self, returncode, stdout, stderr, timed_out=False, missing=False):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr
        self.timed_out, self.missing = timed_out, missing


def run(cmd, timeout, stdin=None, env=None, cwd=None):
    try:
        p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout,
                           env=env, cwd=cwd, errors="replace")
        return Done(p.returncode, p.stdout, p.stderr)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr
        return Done(None, out or "", err or "", timed_out=True)
    except OSError as e:
        return Done(None, "", str(e), missing=True)


def run_streaming(cmd, timeout, log, env=None):
    """run(), with each line the command writes on stderr passed to log() as it comes (a long
    race says what it finished), and kept."""
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace", env=env)
    except OSError as e:
        return Done(None, "", str(e), missing=True)
    out, err = [], []

    def pump_err():
        for line in p.stderr:
            err.append(line)
            log("  " + line.rstrip())

    threads = [threading.Thread(target=pump_err, daemon=True),
               threading.Thread(target=lambda: out.append(p.stdout.read()), daemon=True)]
    for t in threads:
        t.start()
    timed_out = False
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        p.kill()
        p.wait()
    except BaseException:  # Ctrl-C, SIGTERM: the command does not outlive bench/gpu
        p.kill()
        p.wait()
        raise
    for t in threads:
        t.join(10)
    return Done(None if timed_out else p.returncode, "".join(out), "".join(err),
                timed_out=timed_out)


def last_line(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def describe_failure(done, timeout):
    """What went wrong, in one line: timed out, killed by a signal, or exit status and stderr."""
    if done.timed_out:
        return f"ran past its limit of {timeout:.0f} s and was stopped"
    if done.missing:
        return f"could not be started ({done.stderr})"
    rc = done.returncode
    if rc is not None and rc < 0:
        try:
            what = f"was killed by signal {signal.Signals(-rc).name}"
        except ValueError:
            what = f"was killed by signal {-rc}"
    else:
        what = f"exited with status {rc}"
    tail = last_line(done.stderr)
    return f"{what}" + (f": {tail}" if tail else "")
