"""A memcached UDP client of the test's own (no Debian client does a binary GET or DELETE over
UDP): one request per invocation, built with struct, the answer printed on one line.

    memcached_udp_client.py HOST:PORT bget KEY       -> bget KEY status=S flags=F value=V
    memcached_udp_client.py HOST:PORT bdel KEY       -> bdel KEY status=S
    memcached_udp_client.py HOST:PORT bset KEY VALUE -> bset KEY status=S
    memcached_udp_client.py HOST:PORT ascii TEXT     -> ascii TEXT... (the answer, \\r\\n shown as |)
"""
import os
import socket
import struct
import sys

HEADER = "!BBHBBHIIQ"


def exchange(addr, body):
    rid = os.getpid() & 0xFFFF
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    s.sendto(struct.pack("!HHHH", rid, 0, 1, 0) + body, addr)
    data, _ = s.recvfrom(65536)
    got = struct.unpack("!HHHH", data[:8])
    assert got[0] == rid and got[1:3] == (0, 1), got
    return data[8:]


def binary(opcode, key, extras=b"", value=b""):
    total = len(extras) + len(key) + len(value)
    return struct.pack(HEADER, 0x80, opcode, len(key), len(extras), 0, 0, total, 0x5EED, 0) + extras + key + value


def main():
    host, port = sys.argv[1].split(":")
    addr = (host, int(port))
    cmd, key = sys.argv[2], sys.argv[3].encode()
    if cmd == "ascii":
        text = sys.argv[3].encode().decode("unicode_escape").encode()
        print("ascii", exchange(addr, text).decode().replace("\r\n", "|"))
        return
    op = {"bget": 0x00, "bset": 0x01, "bdel": 0x04}[cmd]
    extras, value = b"", b""
    if cmd == "bset":
        extras, value = struct.pack("!II", 0xC0FFEE, 0), sys.argv[4].encode()
    r = exchange(addr, binary(op, key, extras, value))
    magic, opcode, klen, elen, _, status, total, opaque, _ = struct.unpack(HEADER, r[:24])
    assert magic == 0x81 and opcode == op and opaque == 0x5EED, (magic, opcode, opaque)
    line = f"{cmd} {key.decode()} status={status}"
    if cmd == "bget" and status == 0:
        flags = struct.unpack("!I", r[24:28])[0]
        line += f" flags={flags:#x} value={r[24 + elen + klen:24 + total].decode()}"
    print(line)


main()
