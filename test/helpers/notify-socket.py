#!/usr/bin/env python3
"""A stand-in for systemd's NOTIFY_SOCKET receiver, for tests (Node has no unix datagram sockets).

Usage: notify-socket.py PATH [STOP_MESSAGE] [TIMEOUT_SECONDS]
Binds a unix datagram socket at PATH (a leading '@' means the abstract namespace, as systemd
writes it), prints {"listening": PATH}, then one JSON line per datagram: {"data": text, "pid":
sender pid from SCM_CREDENTIALS}. Exits after a datagram equal to STOP_MESSAGE (default
STOPPING=1) or, printing {"timeout": true}, after TIMEOUT_SECONDS (default 20) of silence.
"""
import json
import os
import socket
import struct
import sys


def main() -> int:
    path = sys.argv[1]
    stop = sys.argv[2] if len(sys.argv) > 2 else "STOPPING=1"
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
    address = "\0" + path[1:] if path.startswith("@") else path
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    sock.bind(address)
    sock.settimeout(timeout)
    print(json.dumps({"listening": path}), flush=True)
    try:
        while True:
            try:
                data, ancdata, _flags, _addr = sock.recvmsg(65536, socket.CMSG_SPACE(struct.calcsize("iII")))
            except socket.timeout:
                print(json.dumps({"timeout": True}), flush=True)
                return 1
            pid = None
            for level, kind, cdata in ancdata:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid, _uid, _gid = struct.unpack("iII", cdata[: struct.calcsize("iII")])
            text = data.decode("utf-8", "replace")
            print(json.dumps({"data": text, "pid": pid}), flush=True)
            if text == stop:
                return 0
    finally:
        sock.close()
        if not path.startswith("@"):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


if __name__ == "__main__":
    sys.exit(main())
