"""Listens on an AF_UNIX datagram socket as systemd's notify socket and prints the first two
datagrams (READY, then STOPPING) separated by a '---' line; gives up after 60 s."""
import os
import socket
import sys

path = sys.argv[1]
if os.path.exists(path):
    os.unlink(path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(60)
got = []
try:
    while len(got) < 2:
        got.append(s.recv(4096).decode())
except socket.timeout:
    pass
print("\n---\n".join(got))
