#!/usr/bin/env python3
"""Run inside a gpusched job under MPS: checks, through the CUDA driver API
(libcuda, which every driver install has; no toolkit needed), that the limits
the agent set hold on the real GPU.

- CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: the context's SM count
  (cuCtxGetExecAffinity) is about that share of the device's SMs.
- CUDA_MPS_PINNED_DEVICE_MEM_LIMIT: an allocation under the limit succeeds,
  one over it fails with CUDA_ERROR_OUT_OF_MEMORY.

Prints one line per check and exits 1 if any fails.
"""
import ctypes
import os
import sys

cuda = ctypes.CDLL("libcuda.so.1")
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_EXEC_AFFINITY_TYPE_SM_COUNT = 0
CUDA_ERROR_OUT_OF_MEMORY = 2


def check(call, what):
    result = call
    if result != 0:
        name = ctypes.c_char_p()
        cuda.cuGetErrorName(result, ctypes.byref(name))
        print(f"FAIL {what}: {name.value.decode() if name.value else result}")
        sys.exit(1)


class ExecAffinity(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("sm_count", ctypes.c_uint)]


failures = 0
check(cuda.cuInit(0), "cuInit")
device = ctypes.c_int()
check(cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
sms = ctypes.c_int()
check(cuda.cuDeviceGetAttribute(ctypes.byref(sms), CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device), "SM count")
context = ctypes.c_void_p()
check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "primary context")
check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")

percent = int(os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "100"))
affinity = ExecAffinity()
result = cuda.cuCtxGetExecAffinity(ctypes.byref(affinity), CU_EXEC_AFFINITY_TYPE_SM_COUNT)
if result != 0:
    print(f"FAIL cuCtxGetExecAffinity returned {result} (is this job an MPS client?)")
    failures += 1
else:
    # MPS rounds the share to whole SMs (and to its own granularity).
    expected = sms.value * percent / 100
    ok = abs(affinity.sm_count - expected) <= max(2, 0.1 * sms.value)
    print(f"{'PASS' if ok else 'FAIL'} threads: {affinity.sm_count} of {sms.value} SMs for {percent}%")
    failures += 0 if ok else 1

limit = os.environ.get("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "")
limit_mb = int(limit.split("=")[1].rstrip("M")) if "=" in limit else 0
if limit_mb == 0:
    print("FAIL no CUDA_MPS_PINNED_DEVICE_MEM_LIMIT in the environment")
    failures += 1
else:
    pointer = ctypes.c_uint64()
    under = cuda.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(limit_mb // 2 * 1024 * 1024))
    print(f"{'PASS' if under == 0 else 'FAIL'} {limit_mb // 2} MB under a {limit_mb} MB limit: result {under}")
    failures += 0 if under == 0 else 1
    if under == 0:
        cuda.cuMemFree_v2(pointer)
    over = cuda.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(limit_mb * 2 * 1024 * 1024))
    ok = over == CUDA_ERROR_OUT_OF_MEMORY
    print(f"{'PASS' if ok else 'FAIL'} {limit_mb * 2} MB over a {limit_mb} MB limit: result {over} (2 = out of memory)")
    failures += 0 if ok else 1

sys.exit(1 if failures else 0)
