"""numba kernels behind the batch API (compiled on first use, cached on disk by numba).

Every kernel validates each row as it goes (index in 0..51, no duplicate in the row) and
returns the first bad row, or -1; the caller turns that into a ``ValueError``. Tables are
passed in as arrays (see ``tables``): card keys ``K`` (rank key + suit counters, int64),
``FS`` flush suit by suit counters, ``FL`` flush values by 13-bit mask, ``T`` non-flush values
by rank-key sum.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_LOW32 = np.int64(0xFFFFFFFF)


@njit(cache=True, nogil=True)
def high_kernel(  # pragma: no cover - compiled
    a: np.ndarray, K: np.ndarray, FS: np.ndarray, FL: np.ndarray, T: np.ndarray, out: np.ndarray
) -> int:
    n, k = a.shape
    for i in range(n):
        key = np.int64(0)
        seen = np.int64(0)
        for j in range(k):
            c = np.int64(a[i, j])
            if c < 0 or c > 51:
                return i
            bit = np.int64(1) << c
            if seen & bit:
                return i
            seen |= bit
            key += K[c]
        s = FS[key >> 32]
        if s < 0:
            out[i] = T[key & 0xFFFFFFFF]
        else:
            m = 0
            for j in range(k):
                c = a[i, j]
                if (c & 3) == s:
                    m |= 1 << (c >> 2)
            out[i] = FL[m]
    return -1


@njit(cache=True, nogil=True)
def omaha_high_kernel(  # pragma: no cover - compiled
    a: np.ndarray, K: np.ndarray, FL: np.ndarray, T: np.ndarray, out: np.ndarray
) -> int:
    n = a.shape[0]
    hk = np.empty(6, np.int64)
    bk = np.empty(10, np.int64)
    for i in range(n):
        seen = np.int64(0)
        for j in range(9):
            c = np.int64(a[i, j])
            if c < 0 or c > 51:
                return i
            bit = np.int64(1) << c
            if seen & bit:
                return i
            seen |= bit
        k0 = K[a[i, 0]]
        k1 = K[a[i, 1]]
        k2 = K[a[i, 2]]
        k3 = K[a[i, 3]]
        b0 = K[a[i, 4]]
        b1 = K[a[i, 5]]
        b2 = K[a[i, 6]]
        b3 = K[a[i, 7]]
        b4 = K[a[i, 8]]
        hc = (k0 + k1 + k2 + k3) >> 32
        bc = (b0 + b1 + b2 + b3 + b4) >> 32
        k0 &= 0xFFFFFFFF
        k1 &= 0xFFFFFFFF
        k2 &= 0xFFFFFFFF
        k3 &= 0xFFFFFFFF
        b0 &= 0xFFFFFFFF
        b1 &= 0xFFFFFFFF
        b2 &= 0xFFFFFFFF
        b3 &= 0xFFFFFFFF
        b4 &= 0xFFFFFFFF
        hk[0] = k0 + k1
        hk[1] = k0 + k2
        hk[2] = k0 + k3
        hk[3] = k1 + k2
        hk[4] = k1 + k3
        hk[5] = k2 + k3
        bk[0] = b0 + b1 + b2
        bk[1] = b0 + b1 + b3
        bk[2] = b0 + b1 + b4
        bk[3] = b0 + b2 + b3
        bk[4] = b0 + b2 + b4
        bk[5] = b0 + b3 + b4
        bk[6] = b1 + b2 + b3
        bk[7] = b1 + b2 + b4
        bk[8] = b1 + b3 + b4
        bk[9] = b2 + b3 + b4
        h0, h1, h2, h3, h4, h5 = hk[0], hk[1], hk[2], hk[3], hk[4], hk[5]
        best = np.int16(0)
        for t in range(10):
            bt = bk[t]
            m = max(max(T[h0 + bt], T[h1 + bt]), max(T[h2 + bt], T[h3 + bt]))
            best = max(best, max(m, max(T[h4 + bt], T[h5 + bt])))
        # flushes: a suit with >= 3 board cards and >= 2 hole cards (at most one such suit)
        for s in range(4):
            if ((bc >> (3 * s)) & 7) < 3 or ((hc >> (3 * s)) & 7) < 2:
                continue
            for x in range(4):
                cx = a[i, x]
                if (cx & 3) != s:
                    continue
                for y in range(x + 1, 4):
                    cy = a[i, y]
                    if (cy & 3) != s:
                        continue
                    hm = (1 << (cx >> 2)) | (1 << (cy >> 2))
                    for u in range(4, 9):
                        cu = a[i, u]
                        if (cu & 3) != s:
                            continue
                        for v_ in range(u + 1, 9):
                            cv = a[i, v_]
                            if (cv & 3) != s:
                                continue
                            for w in range(v_ + 1, 9):
                                cw = a[i, w]
                                if (cw & 3) != s:
                                    continue
                                m = hm | (1 << (cu >> 2)) | (1 << (cv >> 2)) | (1 << (cw >> 2))
                                v = FL[m]
                                if v > best:
                                    best = v
        out[i] = best
    return -1


@njit(cache=True, nogil=True)
def low8_kernel(a: np.ndarray, LM: np.ndarray, LOW5: np.ndarray, out: np.ndarray) -> int:  # pragma: no cover - compiled
    n, k = a.shape
    for i in range(n):
        seen = np.int64(0)
        m = 0
        for j in range(k):
            c = np.int64(a[i, j])
            if c < 0 or c > 51:
                return i
            bit = np.int64(1) << c
            if seen & bit:
                return i
            seen |= bit
            m |= LM[c]
        out[i] = LOW5[m]
    return -1


@njit(cache=True, nogil=True)
def omaha_low8_kernel(  # pragma: no cover - compiled
    a: np.ndarray, LM: np.ndarray, POP: np.ndarray, out: np.ndarray
) -> int:
    n = a.shape[0]
    hm = np.empty(6, np.int64)
    bm = np.empty(10, np.int64)
    for i in range(n):
        seen = np.int64(0)
        for j in range(9):
            c = np.int64(a[i, j])
            if c < 0 or c > 51:
                return i
            bit = np.int64(1) << c
            if seen & bit:
                return i
            seen |= bit
        nh = 0
        for x in range(4):
            mx = LM[a[i, x]]
            if mx == 0:
                continue
            for y in range(x + 1, 4):
                my = LM[a[i, y]]
                if my != 0 and my != mx:
                    hm[nh] = mx | my
                    nh += 1
        best = 256
        if nh > 0:
            nb = 0
            for x in range(4, 9):
                mx = LM[a[i, x]]
                if mx == 0:
                    continue
                for y in range(x + 1, 9):
                    my = LM[a[i, y]]
                    if my == 0 or my == mx:
                        continue
                    mxy = mx | my
                    for z in range(y + 1, 9):
                        mz = LM[a[i, z]]
                        if mz != 0 and (mz & mxy) == 0:
                            bm[nb] = mxy | mz
                            nb += 1
            for p in range(nh):
                h = hm[p]
                for t in range(nb):
                    b = bm[t]
                    if (h & b) == 0:
                        m = h | b
                        if m < best:
                            best = m
        out[i] = 256 - best if best < 256 else 0
    return -1


@njit(cache=True, nogil=True)
def five_kernel(  # pragma: no cover - compiled
    a: np.ndarray, K: np.ndarray, FLV: np.ndarray, T: np.ndarray, soko: bool, FF: np.ndarray, out: np.ndarray
) -> int:
    """Five-card tables: deuce-to-seven (``soko`` False) or Soko (``soko`` True, FF = 4-flush)."""
    n = a.shape[0]
    for i in range(n):
        key = np.int64(0)
        seen = np.int64(0)
        for j in range(5):
            c = np.int64(a[i, j])
            if c < 0 or c > 51:
                return i
            bit = np.int64(1) << c
            if seen & bit:
                return i
            seen |= bit
            key += K[c]
        counts = key >> 32
        if counts == 5 or counts == 5 << 3 or counts == 5 << 6 or counts == 5 << 9:
            m = 0
            for j in range(5):
                m |= 1 << (a[i, j] >> 2)
            out[i] = FLV[m]
            continue
        v = np.int64(T[key & 0xFFFFFFFF])
        if soko:
            for s in range(4):
                if ((counts >> (3 * s)) & 7) == 4:
                    m = 0
                    kick = 0
                    for j in range(5):
                        c = a[i, j]
                        if (c & 3) == s:
                            m |= 1 << (c >> 2)
                        else:
                            kick = c >> 2
                    f = np.int64(FF[m * 16 + kick])
                    if f > v:
                        v = f
        out[i] = v
    return -1
