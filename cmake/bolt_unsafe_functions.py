#!/usr/bin/env python3
"""Names the functions llvm-bolt 16 must not move (cmake/bolt_text_order.sh).

    bolt_unsafe_functions.py PROGRAM > unsafe.txt

GCC splits a function's unlikely code into a fragment of its own (FN.cold).
BOLT 16 sizes a position-independent jump table by reading its entries up
to the first that leaves the function, so a table with an entry into a
.cold fragment is cut short there. When BOLT moves the table, what follows
the cut is overwritten: libgcc's read_encoded_value_with_base lost its sdata4
case this way, and every C++ throw crashed in the unwinder.

Printed: every name of each function whose code loads the address of a table
(lea ...(%rip)) whose 32-bit entries, each relative to the table, land in
the function or in a .cold fragment of its name, with at least one in a
fragment; and the names of those fragments. Functions are told apart by
address, so aliases (a constructor's C1 and C2) and local functions that
share a name are each covered. Data that happens to read like such a table
only keeps a function where it was. What this misses, BOLT reports ("due to
cold fragments"), and bolt_text_order.sh then fails the build.
"""
import collections
import re
import subprocess
import sys

COLD = re.compile(r"^(.*)\.cold(\.\d+)?$")


def run(*command):
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def functions(program):
    """address -> (size, [names]) of each defined function."""
    found = {}
    for line in run("nm", "--defined-only", "-S", program).splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            address, size = int(parts[0], 16), int(parts[1], 16)
            entry = found.setdefault(address, (size, []))
            entry[1].append(parts[3])
    return found


def sections(program):
    """(address, file offset, size) of each allocated section with contents."""
    found = []
    for line in run("readelf", "-SW", program).splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+\S+\s+PROGBITS\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and int(m.group(1), 16):
            found.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)))
    return found


def table_loads(program):
    """function address -> addresses its code takes with lea ...(%rip)."""
    loads = collections.defaultdict(list)
    current = None
    header = re.compile(r"^([0-9a-f]+) <.+>:$")
    lea = re.compile(r"\slea\s+-?0x[0-9a-f]+\(%rip\),%\w+\s+# ([0-9a-f]+)")
    for line in run("objdump", "-d", "--no-show-raw-insn", program).splitlines():
        m = header.match(line)
        if m:
            current = int(m.group(1), 16)
            continue
        m = lea.search(line)
        if m and current is not None:
            loads[current].append(int(m.group(1), 16))
    return loads


def main():
    program = sys.argv[1]
    funcs = functions(program)
    # name -> the (address, size) of each .cold fragment of that name.
    cold = collections.defaultdict(list)
    for address, (size, names) in funcs.items():
        for name in names:
            m = COLD.match(name)
            if m:
                cold[m.group(1)].append((address, size))
    with open(program, "rb") as f:
        image = f.read()
    secs = sections(program)

    def read_s32(address):
        for start, offset, size in secs:
            if start <= address and address + 4 <= start + size:
                at = offset + address - start
                return int.from_bytes(image[at:at + 4], "little", signed=True)
        return None

    unsafe = set()
    for address, tables in table_loads(program).items():
        if address not in funcs:
            continue
        size, names = funcs[address]
        fragments = [piece for name in names for piece in cold.get(name, [])]
        if not fragments:
            continue

        def where(target):
            if address <= target < address + size:
                return "body"
            if any(start <= target < start + length for start, length in fragments):
                return "cold"
            return None

        for table in tables:
            places = []
            while True:
                entry = read_s32(table + 4 * len(places))
                place = None if entry is None else where(table + entry)
                if place is None:
                    break
                places.append(place)
            if "cold" in places:
                unsafe.update(names)
                for name in names:
                    unsafe.update(n for start, _ in cold.get(name, []) for n in funcs[start][1])
                break
    for name in sorted(unsafe):
        print(name)


if __name__ == "__main__":
    main()
