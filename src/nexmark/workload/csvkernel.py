"""The compiled inner loop of csvtext.py: the lines of a chunk of events, into one buffer.

Kept apart so that only dataset writing imports numba (about half a second per process) and
compiles these functions (cached on disk after the first run, see numba's `cache=True`).

A line is a small program per kind: rows of `ops` (code, a, b) with
    CONST  copy consts[a:b]
    INT    the decimal text of values[a + row]
    TIME   values[a + row] (epoch milliseconds) as "YYYY-MM-DD HH:MM:SS.mmm", UTC
    TEXT   entry b + values[a + row] of the string table (offsets, data)
where `row` counts the events of that kind so far: each kind's columns are the rows of that
kind only, as generator.kind_columns makes them.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

CONST, INT, TIME, TEXT = 0, 1, 2, 3
INT_BYTES = 20  # longest int64 text, sign included
TIME_BYTES = 32  # longest timestamp text (years beyond 9999 take more than four digits)

_MS_PER_DAY = 86_400_000
PREFETCH_AHEAD = 8  # lines
BLOCK = 16  # bytes copied at once; every source and `out` need this much slack at their end


@intrinsic
def _copy_block(typingctx, dst, dst_start, src, src_start):
    """dst[dst_start:dst_start + BLOCK] = src[src_start:src_start + BLOCK], as one fixed-size
    memcpy, which LLVM turns into a single unaligned vector load and store."""

    def codegen(context, builder, signature, args):
        dst_array = context.make_array(signature.args[0])(context, builder, args[0])
        src_array = context.make_array(signature.args[2])(context, builder, args[2])
        cgutils.raw_memcpy(
            builder,
            builder.gep(dst_array.data, [args[1]]),
            builder.gep(src_array.data, [args[3]]),
            context.get_constant(types.intp, BLOCK),
            1,
        )
        return context.get_dummy_value()

    return types.void(dst, dst_start, src, src_start), codegen


@intrinsic
def _prefetch(typingctx, array, index):
    """Ask the CPU to start loading array[index] into its caches (no effect on results)."""

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        address = builder.bitcast(builder.gep(data, [args[1]]), cgutils.voidptr_t)
        i32 = ir.IntType(32)
        signature_ = ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t, i32, i32, i32])
        prefetch = cgutils.get_or_insert_function(builder.module, signature_, "llvm.prefetch.p0")
        read, keep, data_cache = i32(0), i32(3), i32(1)
        builder.call(prefetch, [address, read, keep, data_cache])
        return context.get_dummy_value()

    return types.void(array, index), codegen


@njit(cache=True, nogil=True, inline="always")
def _copy(out, pos, src, start, stop):
    """Copy src[start:stop] to out[pos:]; returns the position after it.

    Copies whole blocks: up to BLOCK - 1 bytes past the end are read from `src` (its slack)
    and written to `out`, where the next field overwrites them. A byte loop costs about 1 ns
    per byte, a call to memcpy about 40 ns; this costs a few ns per field.
    """
    for k in range(0, stop - start, BLOCK):
        _copy_block(out, pos + k, src, start + k)
    return pos + stop - start


# Digits are computed in unsigned arithmetic: numba's signed `//` and `%` keep Python's
# floor semantics with real divisions (4x slower), unsigned ones by a constant are multiplies.
_U10, _U100, _ZERO = np.uint64(10), np.uint64(100), np.uint8(48)


@njit(cache=True, nogil=True, inline="always")
def _digits(value):
    """Decimal digits of an unsigned `value` (multiplying up: cheaper than dividing down)."""
    digits = 1
    power = np.uint64(10)
    while digits < 19 and value >= power:
        power *= np.uint64(10)
        digits += 1
    return digits + 1 if value >= power else digits  # 10**20 overflows: stop at 10**19


@njit(cache=True, nogil=True, inline="always")
def _write_unsigned(out, pos, value, digits):
    """`digits` decimal digits of `value` at out[pos:], two per division; returns the end.

    (Looping while `value` >= 100 runs about twice as fast as counting the digits down.)
    """
    q = pos + digits
    while value >= _U100:
        pair = value % _U100
        value //= _U100
        out[q - 1] = _ZERO + np.uint8(pair % _U10)
        out[q - 2] = _ZERO + np.uint8(pair // _U10)
        q -= 2
    if value >= _U10:
        out[q - 1] = _ZERO + np.uint8(value % _U10)
        out[q - 2] = _ZERO + np.uint8(value // _U10)
        q -= 2
    else:
        out[q - 1] = _ZERO + np.uint8(value)
        q -= 1
    while q > pos:  # zero padding
        out[q - 1] = _ZERO
        q -= 1
    return pos + digits


@njit(cache=True, nogil=True, inline="always")
def _write_int(out, pos, value):
    if value < 0:
        out[pos] = 45  # "-"
        pos += 1
        value = -value
    magnitude = np.uint64(value)
    return _write_unsigned(out, pos, magnitude, _digits(magnitude))


@njit(cache=True, nogil=True, inline="always")
def _write_padded(out, pos, value, width):
    """`value` (>= 0) in decimal, zero-padded to `width` digits at least."""
    magnitude = np.uint64(value)
    return _write_unsigned(out, pos, magnitude, max(_digits(magnitude), width))


@njit(cache=True, nogil=True, inline="always")
def _write_field(out, pos, separator, value, width):
    out[pos] = separator
    return _write_padded(out, pos + 1, value, width)


@njit(cache=True, nogil=True, inline="always")
def _write_time(out, pos, ms):
    """Epoch milliseconds as "YYYY-MM-DD HH:MM:SS.mmm" (the proleptic Gregorian calendar, as
    pyarrow casts timestamp[ms] to string); days to a civil date by the era arithmetic of
    H. Hinnant's "chrono-compatible low-level date algorithms"."""
    days = ms // _MS_PER_DAY  # floor division, also for times before 1970
    in_day = ms - days * _MS_PER_DAY
    z = days + 719_468  # days since 0000-03-01
    era = z // 146_097
    day_of_era = z - era * 146_097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153  # March = 0
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + 3 if month_index < 10 else month_index - 9
    year = year_of_era + era * 400 + (1 if month <= 2 else 0)
    pos = _write_padded(out, pos, year, 4)
    pos = _write_field(out, pos, 45, month, 2)  # "-"
    pos = _write_field(out, pos, 45, day, 2)
    pos = _write_field(out, pos, 32, in_day // 3_600_000, 2)  # " "
    pos = _write_field(out, pos, 58, in_day // 60_000 % 60, 2)  # ":"
    pos = _write_field(out, pos, 58, in_day // 1000 % 60, 2)
    return _write_field(out, pos, 46, in_day % 1000, 3)  # "."


@njit(cache=True, nogil=True)
def write_lines(kinds, ops, op_start, values, offsets, data, consts, out):
    """Write the line of every event in `kinds` (0, 1, 2 in event order) into `out`.

    Returns the number of bytes written; `out` must hold the caller's upper bound plus BLOCK
    bytes, and `data` and `consts` BLOCK bytes of slack after their last entry.
    """
    pos = 0
    rows = np.zeros(3, np.int64)
    last_ms = np.int64(-(2**63))  # events share a millisecond by the hundred: format it once
    time_text = np.zeros(TIME_BYTES + BLOCK, np.uint8)
    time_len = 0
    # Text entries are scattered over tables of megabytes, so most would be cache misses:
    # the texts of the event PREFETCH_AHEAD lines ahead are requested before they are needed.
    text_ops = np.empty(len(ops), np.int64)  # the TEXT operations of each kind, in order
    text_start = np.zeros(4, np.int64)
    for kind in range(3):
        text_start[kind + 1] = text_start[kind]
        for j in range(op_start[kind], op_start[kind + 1]):
            if ops[j, 0] == TEXT:
                text_ops[text_start[kind + 1]] = j
                text_start[kind + 1] += 1
    ahead_rows = np.zeros(3, np.int64)
    for i in range(min(PREFETCH_AHEAD, len(kinds))):
        ahead_rows[kinds[i]] += 1
    for i in range(len(kinds)):
        if i + PREFETCH_AHEAD < len(kinds):
            ahead = kinds[i + PREFETCH_AHEAD]
            ahead_row = ahead_rows[ahead]
            ahead_rows[ahead] = ahead_row + 1
            for t in range(text_start[ahead], text_start[ahead + 1]):
                j = text_ops[t]
                first = offsets[ops[j, 2] + values[ops[j, 1] + ahead_row]]
                _prefetch(data, first)
                _prefetch(data, first + 64)
        kind = kinds[i]
        row = rows[kind]
        rows[kind] = row + 1
        for j in range(op_start[kind], op_start[kind + 1]):
            code, a, b = ops[j, 0], ops[j, 1], ops[j, 2]
            if code == CONST:
                pos = _copy(out, pos, consts, a, b)
            elif code == TEXT:
                entry = b + values[a + row]
                pos = _copy(out, pos, data, offsets[entry], offsets[entry + 1])
            elif code == INT:
                pos = _write_int(out, pos, values[a + row])
            else:
                ms = values[a + row]
                if ms != last_ms:
                    time_len = _write_time(time_text, 0, ms)
                    last_ms = ms
                pos = _copy(out, pos, time_text, 0, time_len)
    return pos
