#!/usr/bin/env python3
"""Names the functions llvm-bolt 16 must not move (cmake/bolt_text_order.sh).

    bolt_unsafe_functions.py PROGRAM > unsafe.txt

GCC splits a function's unlikely code into a fragment of its own (FN.cold).
BOLT 16 sizes a position-independent jump table by reading its entries up
to the first that leaves the function, so a table with an entry into FN.cold
is cut short there. When BOLT moves the table, what follows the cut is
overwritten: libgcc's read_encoded_value_with_base lost its sdata4 case this
way, and every C++ throw crashed in the unwinder.

Printed: each function that has a .cold fragment and loads the address of a
table (lea ...(%rip)) whose 32-bit entries, each relative to the table, land
in the function or its fragment, with at least one in the fragment. Data that
happens to read the same way only keeps a function where it was.
"""
import re
import subprocess
import sys


def symbols(program):
    """name -> (address, size) of each defined function."""
    out = subprocess.run(["nm", "--defined-only", "-S", program], check=True, capture_output=True,
                         text=True).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            table.setdefault(parts[3], (int(parts[0], 16), int(parts[1], 16)))
    return table


def sections(program):
    """(address, file offset, size) of each allocated section."""
    out = subprocess.run(["readelf", "-SW", program], check=True, capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+\S+\s+(PROGBITS)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and int(m.group(2), 16):
            found.append((int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)))
    return found


def table_loads(program, functions):
    """function name -> addresses its code takes with lea ...(%rip)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-j", ".text", program], check=True,
                         capture_output=True, text=True).stdout
    loads = {}
    current = None
    header = re.compile(r"^[0-9a-f]+ <(.+)>:$")
    lea = re.compile(r"\slea\s+-?0x[0-9a-f]+\(%rip\),%\w+\s+# ([0-9a-f]+)")
    for line in out.splitlines():
        m = header.match(line)
        if m:
            current = m.group(1) if m.group(1) in functions else None
            continue
        if current:
            m = lea.search(line)
            if m:
                loads.setdefault(current, []).append(int(m.group(1), 16))
    return loads


def main():
    program = sys.argv[1]
    syms = symbols(program)
    split = {name[:-len(".cold")]: syms[name] for name in syms
             if name.endswith(".cold") and name[:-len(".cold")] in syms}
    with open(program, "rb") as f:
        image = f.read()
    secs = sections(program)

    def read_s32(address):
        for start, offset, size in secs:
            if start <= address and address + 4 <= start + size:
                at = offset + address - start
                return int.from_bytes(image[at:at + 4], "little", signed=True)
        return None

    for name, addresses in sorted(table_loads(program, set(split)).items()):
        body, cold = syms[name], split[name]

        def where(target):
            if body[0] <= target < body[0] + body[1]:
                return "body"
            if cold[0] <= target < cold[0] + cold[1]:
                return "cold"
            return None

        for table in addresses:
            places = []
            while True:
                entry = read_s32(table + 4 * len(places))
                place = None if entry is None else where(table + entry)
                if place is None:
                    break
                places.append(place)
            if "cold" in places:
                print(name)
                break


if __name__ == "__main__":
    main()
