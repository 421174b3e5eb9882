"""Reading and writing the parts of a wasm binary the size scripts need
(size.py, short-imports.py): LEB128 numbers, names, the section list."""


def leb(buf, i):
    """The unsigned LEB128 number at `buf[i]`, and the index after it."""
    result = shift = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return result, i


def uleb(n):
    """`n` as unsigned LEB128 bytes."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_name(buf, i):
    """The length-prefixed UTF-8 name at `buf[i]`, and the index after it."""
    ln, i = leb(buf, i)
    return buf[i:i + ln].decode(), i + ln


def name_bytes(name):
    """`name` length-prefixed, as the binary writes it."""
    b = name.encode()
    return uleb(len(b)) + b


def sections(buf):
    """(section id, body) for each section after the 8-byte header."""
    i = 8
    while i < len(buf):
        sid = buf[i]
        size, j = leb(buf, i + 1)
        yield sid, buf[j:j + size]
        i = j + size
