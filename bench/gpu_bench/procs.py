"""Running the tools: a subprocess with a time limit, its output kept, never an exception."""

import signal
import subprocess


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
