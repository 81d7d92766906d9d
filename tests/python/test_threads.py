"""The GIL is released while tcjit compiles, tunes and runs on the emulator: another Python thread
runs Python code during the call. Deterministic, with no timing threshold: the switch interval is
made so long that a thread holding the GIL keeps it until it releases it itself, the worker
records the interval of its call (just before and just after it), and the main thread (which
yields the GIL at each iteration) counts its iterations inside that interval. With the GIL held
through the call there are none: the main thread runs again only after the worker has finished."""

import sys
import threading
import time

import numpy as np

from conftest import random_array, tcjit


def iterations_during(call):
    inside = threading.Event()
    window = {}

    def worker():
        inside.set()
        window["start"] = time.perf_counter_ns()
        call()
        window["end"] = time.perf_counter_ns()

    thread = threading.Thread(target=worker)
    ticks = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        thread.start()
        inside.wait()
        while thread.is_alive():
            ticks.append(time.perf_counter_ns())
            time.sleep(0)  # gives the GIL back to the worker when it returns from the call
        thread.join()
    finally:
        sys.setswitchinterval(interval)
    return sum(1 for t in ticks if window["start"] < t < window["end"])


def test_the_measure_sees_a_call_that_holds_the_gil():
    assert iterations_during(lambda: sum(range(10 ** 7))) == 0
    assert iterations_during(lambda: time.sleep(0.05)) > 0


def test_compile_releases_the_gil(rt):
    assert iterations_during(lambda: rt.prepare("gemm m=96 n=80 k=64 a=f16 b=f16 act=gelu")) > 0


def test_emulator_run_releases_the_gil(rt):
    rng = np.random.default_rng(30)
    a = random_array((256, 256), np.float16, rng)
    b = random_array((256, 256), np.float16, rng)
    op = rt.prepare("gemm m=256 n=256 k=256 a=f16 b=f16")
    assert iterations_during(lambda: op(a, b)) > 0


def test_tune_releases_the_gil(db_path):
    spec = "gemm m=64 n=64 k=32 a=f16 b=f16"
    assert iterations_during(lambda: tcjit.tune(spec, budget=2, db=db_path, device="emu",
                                                progress=False)) > 0
