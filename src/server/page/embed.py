#!/usr/bin/env python3
"""Writes a file's bytes as a C array, for a page the daemon serves from its
own binary (GET /). Python because Meson itself runs on it: embedding needs
nothing that a build does not already have (xxd is not always installed).

    embed.py INPUT OUTPUT.c SYMBOL

defines `const unsigned char SYMBOL[]` (the bytes, then a NUL so that the
page can be read as a string) and `const size_t SYMBOL_len` (without it)."""
import sys


def main() -> int:
    if len(sys.argv) != 4:
        print("usage: embed.py INPUT OUTPUT.c SYMBOL", file=sys.stderr)
        return 2
    src, out, sym = sys.argv[1:]
    data = open(src, "rb").read()
    lines = []
    for at in range(0, len(data), 16):
        lines.append("    " + " ".join(f"0x{b:02x}," for b in data[at:at + 16]))
    with open(out, "w") as f:
        f.write(f"/* Generated from {src.split('/')[-1]} by embed.py; do not edit. */\n")
        f.write("#include <stddef.h>\n\n")
        f.write(f"const unsigned char {sym}[] = {{\n")
        f.write("\n".join(lines + ["    0x00"]))
        f.write("\n};\n")
        f.write(f"const size_t {sym}_len = {len(data)};\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
